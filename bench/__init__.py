"""Benchmarks that print figures; never timed assertions in tests.

What every bench starts the browser with: Debian's Chromium, quiet on a closed network (the same
flags as tests/e2e/conftest.py's; any outside host fails at once)."""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
