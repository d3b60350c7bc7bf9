"""What a user can type, bounded before any work: limits, a guarded JSON reader, short messages.

Model descriptions arrive from a JSON box in the browser, from `--config` files and from
Hugging Face config.json files. Everything here runs before a single layer is built, so a
hostile or mistaken text costs at most the time to read 64 KiB once:

    size    at most MAX_TEXT_BYTES of UTF-8, checked before parsing
    depth   at most MAX_DEPTH nested arrays/objects, counted by a linear scan before json.loads
            (json.loads recurses: 100,000 brackets would raise RecursionError)
    numbers integers of more than MAX_NUMBER_DIGITS digits are never converted (a 5,000-digit
            integer is kept as a `LongNumber` that says how long it is); NaN, Infinity and a
            float beyond float64's range are read as the JSON extension they are, a float
            (`NonFinite`, which json.dumps writes back as NaN / Infinity): no size field
            accepts one, so they are refused with the field's path, and a config.json may keep
            them in fields that do not matter, as transformers writes time_step_limit
            [0.0, Infinity]
    keys    a key repeated in one object is refused (json.loads would keep the last silently)

Messages are one line of plain text. Values from the user are quoted shortened (`quote`,
`describe_value`), with control characters removed: the UI escapes markup itself.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any

MAX_TEXT_BYTES = 65_536  # 64 KiB: a preset as JSON is ~3 KB, a Hugging Face config.json ~2–10 KB
MAX_DEPTH = 32  # a model description nests 4 deep, a config.json 3–5 (text_config, rope_scaling)
MAX_NUMBER_DIGITS = 40  # more than any size needs (2^53 has 16 digits)
MAX_FLOAT_CHARS = 100  # a float written longer is not converted either
MAX_QUOTE_CHARS = 40  # how much of a user's string a message repeats
MAX_SCAN_CHARS = 2**24  # the longest text printable/escape_unprintable/nesting_depth will scan
MAX_LIMIT = 1_000_000  # the largest `limit` a caller may ask of quote/escape_unprintable/check_text

# Unicode categories removed from anything echoed back: controls (ESC, CR, LF, DEL…), format
# characters (bidi overrides that reorder a line), lone surrogates, line/paragraph separators.
_UNPRINTABLE = {"Cc", "Cf", "Cs", "Zl", "Zp"}
_SPECIAL = re.compile(r'[\\"\[\]{}]')


class LongNumber:
    """A JSON number left unconverted: longer than MAX_NUMBER_DIGITS, or beyond float64."""

    __slots__ = ("chars", "start")

    def __init__(self, text: str) -> None:
        self.chars = len(text)
        self.start = text[:12]

    def __repr__(self) -> str:
        if self.start in ("NaN", "Infinity", "-Infinity"):
            return f"{self.start} (not a finite number)"
        if self.chars <= MAX_NUMBER_DIGITS:
            return f"{self.start} (beyond float64's range)"
        return f"a number written with {self.chars:,} characters ({self.start}…)"


class NonFinite(float):
    """NaN, Infinity or -Infinity from a JSON text (Python's JSON extension): a float, so a
    parsed config.json can be written back with json.dumps, but named as what it is."""

    written: str | None = None  # a literal such as 1e999, beyond float64's range

    def __repr__(self) -> str:
        if self.written is not None:
            return f"{self.written[:12]} (beyond float64's range)"
        text = "NaN" if math.isnan(self) else ("Infinity" if self > 0 else "-Infinity")
        return f"{text} (not a finite number)"


def _scannable(name: str, text: Any) -> str:
    """A str of at most MAX_SCAN_CHARS characters, else a ValueError naming `name`."""
    if not isinstance(text, str):
        raise ValueError(f"{name}: expected a string, got {describe_value(text)}")
    if len(text) > MAX_SCAN_CHARS:
        raise ValueError(f"{name}: {len(text):,} characters is too long; accepted: at most "
                         f"{MAX_SCAN_CHARS:,}")
    return text


def _limit(name: str, value: Any, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_LIMIT:
        raise ValueError(f"{name}: expected an integer from {low} to {MAX_LIMIT:,}, got "
                         f"{describe_value(value)}")
    return value


def printable(text: str) -> str:
    """`text` without control, format and separator characters (ESC, bidi overrides, newlines).
    At most MAX_SCAN_CHARS characters (a ValueError otherwise)."""
    text = _scannable("text", text)
    if text.isprintable():
        return text
    return "".join(c for c in text if unicodedata.category(c) not in _UNPRINTABLE)


def escape_unprintable(text: str, limit: int = 500) -> str:
    """`text` for a terminal: control, format and separator characters shown as escapes
    (ESC → \\x1b, U+202E → \\u202e), at most `limit` (1 to MAX_LIMIT) characters."""
    if not isinstance(text, str):
        raise ValueError(f"text: expected a string, got {describe_value(text)}")
    limit = _limit("limit", limit)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if text.isprintable():
        return text
    return "".join(c if unicodedata.category(c) not in _UNPRINTABLE
                   else c.encode("unicode_escape", "backslashreplace").decode("ascii")
                   for c in text)


def quote(text: Any, limit: int = MAX_QUOTE_CHARS) -> str:
    """A user's string for a message: printable, at most `limit` characters (2 to MAX_LIMIT),
    in single quotes."""
    limit = _limit("limit", limit, 2)
    if not isinstance(text, str):
        return describe_value(text)
    shown = printable(text[: limit * 4])  # never scan more than a few times what is shown
    if len(shown) > limit or len(text) > limit * 4:
        shown = shown[: limit - 1] + "…"
    return f"'{shown}'"


def describe_value(value: Any) -> str:
    """A short, one-line description of any value: never converts a huge integer to text and
    never walks into a nested container."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if value.bit_length() <= 128:  # at most 39 digits
            return str(value)
        digits = int(value.bit_length() * math.log10(2)) + 1
        return f"{'-' if value < 0 else ''}an integer of about {digits:,} digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, LongNumber):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value):,} items"
    if isinstance(value, dict):
        return f"an object with {len(value):,} fields"
    return f"a {type(value).__name__}"


def key_path(path: str, key: Any) -> str:
    """`path.key` for a message, the key quoted shortened when it is not a plain name."""
    if not isinstance(path, str):
        raise ValueError(f"path: expected a field path (text, '' at the top), got "
                         f"{describe_value(path)}")
    if isinstance(key, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", key):
        return f"{path}.{key}" if path else key
    return f"{path}[{quote(key)}]" if path else f"[{quote(key)}]"


def check_int(path: str, value: Any, low: int, high: int) -> int:
    """An integer (not bool, not float) in [low, high]; the message names path, value, range."""
    if not isinstance(path, str) or len(path) > MAX_LIMIT:
        raise ValueError(f"path: expected a field name, got {describe_value(path)}")
    if any(isinstance(b, bool) or not isinstance(b, int) for b in (low, high)) or low > high:
        raise ValueError(f"low, high: expected integers with low ≤ high, got "
                         f"{describe_value(low)}, {describe_value(high)}")
    accepted = f"{low:,} to {high:,}"
    if isinstance(value, (LongNumber, NonFinite)):
        raise ValueError(f"{path}: {describe_value(value)} is out of range; accepted: {accepted}")
    if isinstance(value, bool) or not isinstance(value, int):
        kind = "a positive integer" if low == 1 else "an integer"
        raise ValueError(f"{path}: expected {kind}, got {describe_value(value)} "
                         f"(accepted: {accepted})")
    if value < low:
        kind = "a positive integer" if low == 1 else f"an integer ≥ {low}"
        raise ValueError(f"{path}: expected {kind}, got {describe_value(value)} "
                         f"(accepted: {accepted})")
    if value > high:
        raise ValueError(f"{path}: {describe_value(value)} is too large; accepted: {accepted}")
    return value


def check_text(path: str, value: Any, limit: int, *, empty: bool = False) -> str:
    """A string of at most `limit` characters that is valid Unicode (no lone surrogates)."""
    limit = _limit("limit", limit, 0)
    if not isinstance(value, str) or (not value and not empty):
        raise ValueError(f"{path}: expected a {'' if empty else 'non-empty '}string, "
                         f"got {describe_value(value)}")
    if len(value) > limit:
        raise ValueError(f"{path}: {len(value):,} characters is too long; accepted: at most "
                         f"{limit:,}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{path}: not valid Unicode text (a lone surrogate such as \\ud800)"
                         ) from None
    return value


def _parse_int(text: str) -> int | LongNumber:
    return LongNumber(text) if len(text) > MAX_NUMBER_DIGITS else int(text)


def _parse_float(text: str) -> float | LongNumber:
    if len(text) > MAX_FLOAT_CHARS:
        return LongNumber(text)
    x = float(text)
    if math.isfinite(x):
        return x
    beyond = NonFinite(x)  # 1e999: Infinity, as json.loads reads it, named as written
    beyond.written = text
    return beyond


def _parse_constant(name: str) -> NonFinite:
    return NonFinite(name)  # refused where a field needs a number, with the field's path


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"config: the field {quote(key)} appears twice in one object")
        out[key] = value
    return out


def nesting_depth(text: str, limit: int = MAX_DEPTH, what: str = "config") -> int:
    """Deepest nesting of [ ] and { } outside strings; stops and raises past `limit`.

    One pass over the special characters only (no regex over whole strings, which can take
    quadratic time on unterminated ones). At most MAX_SCAN_CHARS characters."""
    text = _scannable(what if isinstance(what, str) else "text", text)
    limit = _limit("limit", limit)
    depth = deepest = 0
    in_string = False
    skip = -1
    for match in _SPECIAL.finditer(text):
        i = match.start()
        if i == skip:
            continue
        c = text[i]
        if in_string:
            if c == "\\":
                skip = i + 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > limit:
                raise ValueError(f"{what}: nested more than {limit} levels deep "
                                 f"(at character {i:,}); accepted: at most {limit}")
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def parse_json_text(text: str | bytes, what: str = "config", *,
                    max_bytes: int = MAX_TEXT_BYTES) -> Any:
    """json.loads with the limits above (at most `max_bytes`, MAX_TEXT_BYTES unless a caller
    reads bigger files, as config.json); every problem is a one-line ValueError. One leading
    byte-order mark is dropped, from text as from bytes."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or not (
            1 <= max_bytes <= MAX_SCAN_CHARS):
        raise ValueError(f"max_bytes: expected 1 to {MAX_SCAN_CHARS:,} bytes, got "
                         f"{describe_value(max_bytes)}")
    limit = max_bytes
    if isinstance(text, (bytes, bytearray)):
        if len(text) > limit:
            raise ValueError(f"{what}: {len(text):,} bytes is too long; accepted: at most "
                             f"{limit:,} bytes")
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise ValueError(f"{what}: not UTF-8 text (byte {error.start:,} cannot be decoded)"
                             ) from None
    if not isinstance(text, str):
        raise ValueError(f"{what}: expected JSON text, got {describe_value(text)}")
    text = text.removeprefix("\ufeff")  # a pasted file keeps its BOM; a read one loses it above
    if len(text) > limit or len(text.encode("utf-8", "surrogatepass")) > limit:
        raise ValueError(f"{what}: the text is longer than {limit:,} bytes; accepted: "
                         f"at most {limit:,} bytes of UTF-8")
    nesting_depth(text, MAX_DEPTH, what)
    try:
        return json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                          parse_constant=_parse_constant, object_pairs_hook=_no_repeated_keys)
    except json.JSONDecodeError as error:
        raise ValueError(f"{what}: not valid JSON ({error.msg.removesuffix(' at')} at line {error.lineno}, "
                         f"column {error.colno})") from None
    except RecursionError:  # not reachable below MAX_DEPTH; kept so no other class escapes
        raise ValueError(f"{what}: nested too deeply") from None
