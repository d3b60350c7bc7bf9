"""The browser player's own tests (tests/js/*.test.js) under node's test runner, as part of
pytest, one pytest test per node test (node runs them all once, for the module): node ships with
this machine kind (Debian's nodejs elsewhere; `make test` installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FILES = sorted(HERE.glob("*.test.js"))
# test("name", ...) at the start of a line: the node tests, read from the files themselves
NAMES = [(f.name, name) for f in FILES
         for name in re.findall(r'^test\("((?:[^"\\]|\\.)*)"', f.read_text(), re.M)]


@pytest.fixture(scope="module")
def node_results() -> tuple[dict[str, bool], str]:
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "node is needed for the player's tests (Debian: apt-get install nodejs)"
    result = subprocess.run([node, "--test", "--test-reporter=tap", *map(str, FILES)],
                            capture_output=True, text=True, timeout=120)
    outcome = {m[2]: not m[1] for m in re.finditer(r"^\s*(not )?ok \d+ - (.*)$", result.stdout, re.M)}
    return outcome, result.stdout + result.stderr


def test_node_ran_every_test_it_was_given(node_results):
    outcome, output = node_results
    ran = int(re.search(r"^# tests (\d+)", output, re.M).group(1))
    assert ran == len(NAMES) >= 7, output[-4000:]


@pytest.mark.parametrize(("file", "name"), NAMES, ids=[n for _, n in NAMES])
def test_js(node_results, file, name):
    outcome, output = node_results
    assert outcome.get(name) is True, f"{file}: {name}\n{output[-4000:]}"
