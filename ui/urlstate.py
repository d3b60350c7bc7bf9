"""Links that reproduce a view: a page's settings <-> its query string.

Every setting always travels (not only those changed from the defaults), so a link keeps its
meaning when defaults change; a page may give a setting a shorter key (``Page.link_keys``).
Dicts and lists (a custom model) travel as compact JSON, base64url; one longer than
COMPRESS_ABOVE characters so is deflated first and marked "z." (a quantised config.json lists
every layer: 75,180 characters plain, 4,844 deflated), read back with a bounded inflate. The token position ``t`` and
the view flags (embed, present, theme, view) belong to the browser's player and shell
(assets/js/player.js, assets/js/link.js), which keep them in the same query.

A value that is invalid or out of range is skipped with a notice naming it (as plain text: the
shell shows notices with textContent); the rest applies. No input can make this raise.
"""

from __future__ import annotations

import base64
import binascii
import math
import zlib
from urllib.parse import parse_qsl, urlencode

import param

from ui.contract import VIEW_PREFIX
from ui.fmt import plain as text
from ui.link_values import (  # noqa: F401  (stated there; read from here too)
    COMPRESS_ABOVE,
    DEFLATED,
    MAX_INFLATED,
    MAX_VALUE,
    encode_json,
)

# The keys of a link that are not settings: the player's and the shell's, with what each
# accepts. Stated here once: build.py writes it into every page (``link_contract``), and the
# shell (assets/js/link.js) validates a link's shell keys by it, names a bad value in a notice and
# drops it from the link; Python leaves these keys to the shell.
#   flag: one of `on` or `off`; choice: one of `values`; int: a whole number from `min` to the
#   run's last t; number: a number from `min` to `max`; view: one of the page's named views.
FLAG = {"accepts": "flag", "on": ["1", "true", "yes", "on"], "off": ["0", "false", "no", "off"]}
SHELL_KEYS: dict[str, dict] = {
    "t": {"accepts": "int", "min": 0, "example": "3",
          "doc": "the token position (up to the run's last t)"},
    "embed": {**FLAG, "example": "1", "doc": "only the simulator, for an <iframe>"},
    "present": {**FLAG, "example": "1", "doc": "the presenter view"},
    "theme": {"accepts": "choice", "values": ["light", "dark"], "example": "dark",
              "doc": "the theme (an embedding course site's)"},
    "view": {"accepts": "view", "example": "", "doc": "one named part of the page"},
    "speed": {"accepts": "number", "min": 0.5, "max": 60, "example": "30",
              "doc": "Play's steps per second"},
}
MAX_QUERY = 100_000  # characters of a query string read at all
MAX_NOTICES = 6  # sentences of one notice; the rest are counted ("and 3 more")
MAX_NAMED = 3  # unknown keys named in one sentence


def link_contract(page) -> dict:
    """What a link of ``page`` may hold, for the shell (lab-config's ``link``): the shell keys
    and what they accept, the settings' link keys and their defaults (the page built ahead of
    time shows those), the page's named views with their names in words, and which of them
    are the presenter view's scenes (keys 1-9), in key order; the settings the shell hides
    before Python when the link's settings say they do not apply (``Page.applies_by_link``); the
    keys of the settings that change no run (``Page.no_recompute``: a link that asks only for
    those steps the default run at once)."""
    keys = _keys(page)
    same_run = sorted(k for k, n in keys.items() if n in page.no_recompute)
    return {"shell": SHELL_KEYS, "settings": sorted(keys), "defaults": to_query(page), "same_run": same_run,
            "views": view_names(page), "view_labels": dict(page.named_views),
            "scenes": page.scene_names(), "applies": page.applies_by_link(),
            "max_notices": MAX_NOTICES, "max_value_shown": 40}


def view_names(page) -> list[str]:
    """The page's named views (``Page.named_views``), in page order."""
    return list(page.named_views)


def marked_views(page) -> list[str]:
    """The views the page's layout marks (``css_classes`` VIEW_PREFIX + a name), in page order:
    the tests check that they are the views the page names."""
    names: list[str] = []
    for obj in page.layout.select(lambda o: bool(getattr(o, "css_classes", None))):
        for cls in obj.css_classes:
            if cls.startswith(VIEW_PREFIX) and cls[len(VIEW_PREFIX):] not in names:
                names.append(cls[len(VIEW_PREFIX):])
    return names


def bounded(notices: list[str]) -> list[str]:
    """At most MAX_NOTICES sentences, the rest counted: a hostile link gets a short notice."""
    if len(notices) <= MAX_NOTICES:
        return notices
    rest = len(notices) - (MAX_NOTICES - 1)
    return [*notices[: MAX_NOTICES - 1], f"… and {rest:,} more notices of this link."]


def _keys(page) -> dict[str, str]:
    """link key -> setting name."""
    return {page.link_keys.get(n, n): n for n in page.settings()}


def encode_value(p: param.Parameter, value) -> str:
    """A setting's value as its link writes it (a page measures a model against MAX_VALUE)."""
    if isinstance(p, param.Boolean):
        return "1" if value else "0"
    if isinstance(p, param.ListSelector):
        return ",".join(map(str, value))
    if isinstance(value, (dict, list, tuple)):
        return encode_json(value)
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same float
    return str(value)


def _inflate(raw: bytes) -> bytes:
    """A deflated value, refused past MAX_INFLATED bytes (a small link cannot unpack to GBs)."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(raw, MAX_INFLATED + 1)
    except zlib.error as err:
        raise ValueError from err
    if len(out) > MAX_INFLATED or not inflater.eof:
        raise ValueError
    return out


def _decode(p: param.Parameter, raw: str):
    if isinstance(p, param.Boolean):
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError
    if isinstance(p, param.Integer):
        if len(raw) > 20:
            raise ValueError
        return int(raw)
    if isinstance(p, param.Number):
        if len(raw) > 40:
            raise ValueError
        x = float(raw)
        if not math.isfinite(x):
            raise ValueError
        return x
    if isinstance(p, (param.Dict, param.List)):
        deflated = raw.startswith(DEFLATED)
        raw = raw.removeprefix(DEFLATED)
        try:
            data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
            decoded = (_inflate(data) if deflated else data).decode()
        except (binascii.Error, UnicodeDecodeError) as err:
            raise ValueError from err
        return decoded  # the page's own parser checks the JSON (size, depth, every number)
    if isinstance(p, param.ListSelector):
        items = [item for item in raw.split(",") if item]
        if len(items) != len(set(items)):
            raise ValueError
        return items
    return raw


def accepted(p: param.Parameter) -> str:
    """What a setting accepts, in words."""
    if isinstance(p, param.ListSelector):
        return "a comma-separated list of different names from: " + ", ".join(map(str, p.objects))
    if isinstance(p, param.Selector):
        return "one of " + ", ".join(map(str, p.objects))
    if isinstance(p, param.Boolean):
        return "1 or 0"
    if isinstance(p, param.Number) and p.bounds:
        lo, hi = p.bounds
        kind = "a whole number" if isinstance(p, param.Integer) else "a number"
        return f"{kind} ≥ {lo}" if hi is None else f"{kind} from {lo} to {hi}"
    if isinstance(p, (param.Dict, param.List)):
        return "a model encoded by the Share link"
    return "a valid value"


def to_query(page) -> str:
    """Every setting of ``page`` as a query string (without the leading '?')."""
    pairs = [(page.link_keys.get(n, n), encode_value(page.param[n], getattr(page, n)))
             for n in page.settings()]
    return urlencode(pairs, safe=",")


def apply_query(page, query: str) -> list[str]:
    """Apply the settings in ``query`` to ``page``; returns one notice (plain text) per value
    ignored. Repeated keys: the last one counts, and the notice says so."""
    notices: list[str] = []
    if len(query) > MAX_QUERY:
        return [f"Ignored the link's settings: it is {len(query):,} characters long "
                f"(at most {MAX_QUERY:,} are read)."]
    keys = _keys(page)
    seen: dict[str, str] = {}
    repeats: dict[str, int] = {}
    unknown: dict[str, int] = {}
    for key, raw in parse_qsl(query.lstrip("?"), keep_blank_values=True):
        if key in SHELL_KEYS:
            continue
        if key not in keys:
            unknown[key] = unknown.get(key, 0) + 1
            continue
        if key in seen:
            repeats[key] = repeats.get(key, 1) + 1
        seen[key] = raw
    if unknown:  # grouped: one sentence, however many
        named = ", ".join(f"“{text(k, 40)}”" for k in list(unknown)[:MAX_NAMED])
        more = f" and {len(unknown) - MAX_NAMED:,} more" if len(unknown) > MAX_NAMED else ""
        what = "an unknown setting" if len(unknown) == 1 else f"{len(unknown):,} unknown settings:"
        notices.append(f"Ignored {what} {named}{more}.")
    for key, n in repeats.items():
        notices.append(f"The link gives {text(key, 40)} {n:,} times; the last one counts.")
    updates = {}
    for key, raw in seen.items():
        name = keys[key]
        p = page.param[name]
        shown = text(raw, 40)
        try:
            if len(raw) > MAX_VALUE:
                raise ValueError
            value = _decode(p, raw)
            p._validate(value) if not isinstance(p, (param.Dict, param.List)) else None
            updates[name] = value
        except Exception:  # noqa: BLE001 — any bad value is reported, never raised at the user
            notices.append(f"Ignored {text(key, 40)}={shown}: expected {accepted(p)}.")
    notices += page.apply_link_settings(updates)
    return bounded(notices)
