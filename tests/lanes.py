"""How many examples a hypothesis property tries in this lane: ``@settings(max_examples=
examples(300))`` is 300 in the slow lane (profile ``full``) and a quarter of it, at least ten, in
the gate (profile ``ci``). tests/conftest.py loads the profile before any test module is imported."""

from __future__ import annotations

from hypothesis import settings


def examples(n: int) -> int:
    return max(10, n * settings.default.max_examples // 100)
