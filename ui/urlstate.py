"""Links that reproduce a view: a PageState <-> the page's query string.

Every knob and t always travel (not only those changed from the defaults), so a link keeps its
meaning when defaults change. ``embed`` and ``present`` are view flags kept as they were set;
the theme never travels. Dicts and lists (a custom model) travel as compact JSON, base64url.
A value that is invalid or out of range is skipped with a notice naming it; the rest applies.
"""

from __future__ import annotations

import base64
import json
import math
from urllib.parse import parse_qsl, urlencode

import param

from ui.state import PageState

VIEW_FLAGS = ("embed", "present")
_LAST = ("t",)  # applied after everything else: its bounds depend on the other knobs


def _encode_value(p: param.Parameter, value) -> str:
    if isinstance(p, param.Boolean):
        return "1" if value else "0"
    if isinstance(value, (dict, list, tuple)):
        raw = json.dumps(value, separators=(",", ":"), sort_keys=True).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")
    if isinstance(value, float):
        return repr(round(value, 10))
    return str(value)


def _decode_value(p: param.Parameter, text: str):
    if isinstance(p, param.Boolean):
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected 1 or 0")
    if isinstance(p, param.Integer):
        return int(text)
    if isinstance(p, param.Number):
        x = float(text)
        if not math.isfinite(x):
            raise ValueError("expected a finite number")
        return x
    if isinstance(p, (param.Dict, param.List)):
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        return json.loads(raw)
    if isinstance(p, param.ListSelector):
        return [item for item in text.split(",") if item]
    return text


def url_params(state: PageState) -> list[str]:
    """The names of the knobs that travel in a link, in a stable order (t last)."""
    names = [n for n in state.param if n not in state.url_exclude and not n.startswith("_")]
    names = [n for n in names if (state.param[n].precedence or 0) >= 0 or n in _LAST]
    return [n for n in names if n not in _LAST] + [n for n in _LAST if n in names]


def to_query(state: PageState, flags: dict[str, bool] | None = None) -> str:
    """Every travelling knob of ``state`` as a query string (without the leading '?')."""
    pairs = []
    for name in url_params(state):
        p = state.param[name]
        value = getattr(state, name)
        if isinstance(p, param.ListSelector):
            pairs.append((name, ",".join(value)))
        else:
            pairs.append((name, _encode_value(p, value)))
    for flag, on in (flags or {}).items():
        if on:
            pairs.append((flag, "1"))
    return urlencode(pairs, safe=",")


def _accepted(p: param.Parameter) -> str:
    if isinstance(p, param.ListSelector):
        return "a comma-separated list of " + ", ".join(map(str, p.objects))
    if isinstance(p, param.Selector):
        return "one of " + ", ".join(map(str, p.objects))
    if isinstance(p, param.Boolean):
        return "1 or 0"
    if isinstance(p, param.Number) and p.bounds:
        lo, hi = p.bounds
        kind = "a whole number" if isinstance(p, param.Integer) else "a number"
        if hi is None:
            return f"{kind} ≥ {lo}"
        return f"{kind} from {lo} to {hi}"
    if isinstance(p, param.Dict):
        return "a model encoded by the Share link"
    return "a valid value"


def apply_query(state: PageState, query: str) -> tuple[list[str], dict[str, bool]]:
    """Apply a query string to ``state``. Returns (notices, view flags).

    Each bad value is skipped with a notice saying what was given and what is accepted.
    """
    notices: list[str] = []
    flags = {flag: False for flag in VIEW_FLAGS}
    pairs = parse_qsl(query.lstrip("?"), keep_blank_values=True)
    known = set(url_params(state))
    ordered = [kv for kv in pairs if kv[0] not in _LAST] + [kv for kv in pairs if kv[0] in _LAST]
    for key, text in ordered:
        if key in VIEW_FLAGS:
            flags[key] = text not in ("0", "false", "")
            continue
        if key == "theme":
            continue
        if key not in known:
            notices.append(f"Ignored unknown setting “{key}”.")
            continue
        p = state.param[key]
        shown = text if len(text) <= 40 else text[:37] + "…"
        old = getattr(state, key)
        try:
            value = _decode_value(p, text)
            if key == "t":
                if not 0 <= value <= state.t_max:
                    raise ValueError
                state.jump(value)
            else:
                state.param.update(**{key: value})
        except Exception:  # noqa: BLE001 — any bad value is reported, never raised at the user
            try:
                state.param.update(**{key: old})
            except Exception:  # noqa: BLE001
                pass
            notices.append(f"Ignored {key}={shown}: expected {_accepted_for(state, key, p)}.")
    return notices, flags


def _accepted_for(state: PageState, key: str, p: param.Parameter) -> str:
    if key == "t":
        return f"a whole number from 0 to {state.t_max}"
    return _accepted(p)
