"""Benchmarks that print figures; never timed assertions in tests.

What every bench starts the browser with: Debian's Chromium, quiet on a closed network (the same
flags as tests/e2e/conftest.py's; any outside host fails at once), and what a cold load waits
for first: a browser at rest (settle)."""

import os
import time
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def browser_cpu_s(executable: str = CHROMIUM, proc: Path = Path("/proc")) -> float | None:
    """CPU seconds (user + system) used so far by every process of the browser: those whose
    command line starts with a program of its executable's name (/usr/bin/chromium starts
    /usr/lib/chromium/chromium, whose renderers, GPU and network processes keep the name).
    None where /proc is missing.

    On a machine of two cores, half of what a page uses from navigation to live is the least
    time it could take to go live: the bench prints it beside the clock."""
    if not proc.is_dir():
        return None
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    name = Path(executable).name.encode()
    total = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # a child rewrites its command line as one string: "/usr/lib/chromium/chromium --type=..."
            command = (entry / "cmdline").read_bytes().split(b"\0")[0].split(b" ")[0]
            if Path(command.decode(errors="replace")).name.encode() != name:
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15 of stat
        except (OSError, IndexError, ValueError):  # a process that ended while being read
            continue
    return total / ticks


# A new browser context opens a new window, and Chromium builds that window's own toolbar first:
# its omnibox popup and search box are web pages of their own ("top chrome" WebUI, a renderer
# process of about 300 scripts). Measured on this machine of two cores: 0.7 s of CPU within the
# first 0.9 s of a page load that starts at once, and gates' first plot 0.88 -> 0.64 s when the
# load waited for it (medians of 6; the page's own work is the same). A reader who opens a link
# already has a window. So every cold load first waits for the browser to be at rest: its
# processes together using under QUIET_MS of CPU in a WINDOW_MS window, for at most PATIENCE_S.
QUIET_MS = 25
WINDOW_MS = 250
PATIENCE_S = 5.0


def settle(cpu=browser_cpu_s, sleep=time.sleep, clock=time.monotonic,
           quiet_ms: float = QUIET_MS, window_ms: float = WINDOW_MS, patience_s: float = PATIENCE_S) -> float:
    """Wait until the browser is at rest (above); returns the seconds waited. Where its CPU time
    cannot be read (no /proc) it waits one window."""
    start = clock()
    last = cpu()
    while True:
        sleep(window_ms / 1000)
        now = cpu()
        if last is None or now is None or (now - last) * 1000 < quiet_ms or clock() - start >= patience_s:
            return clock() - start
        last = now
