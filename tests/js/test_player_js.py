"""The browser player's own tests (tests/js/*.test.js) under node's test runner, as part of
pytest: node ships with this machine kind (Debian's nodejs elsewhere; `make test` installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_player_js_under_node():
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "node is needed for the player's tests (Debian: apt-get install nodejs)"
    files = sorted(str(p) for p in HERE.glob("*.test.js"))
    result = subprocess.run([node, "--test", *files], capture_output=True, text=True, timeout=120)
    passed = int(re.search(r"^# pass (\d+)", result.stdout, re.M).group(1))
    failed = int(re.search(r"^# fail (\d+)", result.stdout, re.M).group(1))
    assert result.returncode == 0 and failed == 0, result.stdout[-4000:]
    assert passed >= 6
