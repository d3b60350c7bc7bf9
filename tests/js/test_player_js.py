"""The shell's and the player's own tests (tests/js/*.test.js, one file per module of
assets/js/) under node's test runner, as part of pytest, one pytest test per node test (node runs
them all once, for the module): node ships with this machine kind (Debian's nodejs elsewhere;
`make test` installs it). The modules read the page config Python writes (ui/contract.py,
ui/urlstate.py): ``page_config`` makes it for the running-sum page and hands it to node in a
file."""

from __future__ import annotations

import json
import os
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


def page_config() -> dict:
    """The parts of lab-config the modules read, as build.py writes them for running-sum."""
    from ui.ahead import choices  # noqa: PLC0415
    from ui.contract import contract  # noqa: PLC0415
    from ui.document import fresh_ids  # noqa: PLC0415
    from ui.pages import PAGES, page_class  # noqa: PLC0415
    from ui.urlstate import (  # noqa: PLC0415
        apply_query,
        link_contract,  # noqa: PLC0415
        to_query,
    )

    fresh_ids()
    cls = page_class(PAGES[0])
    page = cls()
    page.layout  # noqa: B018  (its widgets, which choices reads)
    runs = []  # the offered links' runs, as ui.ahead.ahead_runs lists them (without the patches)
    for n, link in enumerate(cls.offered, 1):
        made = cls()
        apply_query(made, link)
        runs.append({"link": link, "query": to_query(made), "file": f"runs/{PAGES[0].slug}-{n}.json",
                     "t_max": made.run.t_max, "values": {s: getattr(made, s) for s in cls.ahead_settings()}})
    return {"page": PAGES[0].slug, "title": PAGES[0].title, "build": "test0build",
            "sizes": {"core": 10_000_000, "wheels": 20_000_000, "count": 10},
            "link": link_contract(page), "contract": contract(),
            "prerender": {"t_max": page.run.t_max, "csv": page.csv()},
            "prebuilt": [{k: v for k, v in r.items() if k != "values"} for r in runs],
            "choices": choices(page, runs)}


@pytest.fixture(scope="module")
def node_results(tmp_path_factory) -> tuple[dict[str, bool], str]:
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "node is needed for the player's tests (Debian: apt-get install nodejs)"
    config = tmp_path_factory.mktemp("js") / "config.json"
    config.write_text(json.dumps(page_config()))
    result = subprocess.run([node, "--test", "--test-reporter=tap", *map(str, FILES)],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "LAB_TEST_CONFIG": str(config)})
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
