"""A dict or list as a link carries it (ui/urlstate.py's encoding, with nothing but the standard
library, so that a worker without param, Bokeh or Panel writes the same links: the zoo's, ui/zoo.py).

Compact JSON with sorted keys, base64url without padding; one longer than COMPRESS_ABOVE
characters so is deflated first and marked DEFLATED, when that is shorter.
"""

from __future__ import annotations

import base64
import json
import zlib

MAX_VALUE = 20_000  # characters of one value (a custom model's JSON, base64url)
# Dicts and lists longer than this (base64url characters) travel deflated: the defaults stay
# plain, so the link a page writes of its defaults is the same text in every Python.
COMPRESS_ABOVE = 2_000
DEFLATED = "z."  # never the start of base64url ('.' is not in its alphabet)
MAX_INFLATED = 8 * 2**20  # bytes a deflated value may grow to (the largest config.json read)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def encode_json(value: dict | list | tuple) -> str:
    """``value`` as a link writes it: its base64url JSON, or DEFLATED + the deflated one when
    the plain one is longer than COMPRESS_ABOVE and the deflated one shorter."""
    raw = json.dumps(value, separators=(",", ":"), sort_keys=True).encode()
    plain = b64(raw)
    if len(plain) <= COMPRESS_ABOVE:
        return plain
    deflated = DEFLATED + b64(zlib.compress(raw, 9))
    return deflated if len(deflated) < len(plain) else plain
