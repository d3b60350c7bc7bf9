"""build.py, the entry point: its options, its steps (sitebuild/, one module each, each tested in
its own file here) and what makes it run again. The real build runs in `make build`."""

from __future__ import annotations

import re
import subprocess
import sys

import sitebuild
from sitebuild import ROOT

STEPS = sorted(p.stem for p in (ROOT / "sitebuild").glob("*.py") if p.stem != "__init__")


def test_build_py_keeps_its_options():
    result = subprocess.run([sys.executable, str(ROOT / "build.py"), "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("usage: build.py [-h] [--out OUT] [--allow-missing] [--only SLUG]")
    assert "Build the self-contained static site in dist/site/." in result.stdout


def test_every_step_module_is_named_in_the_table_of_contents_and_tested():
    toc = sitebuild.__doc__
    for step in STEPS:
        assert re.search(rf"\b{step}\b", toc), f"sitebuild/{step}.py is not in sitebuild's docstring"
        assert (ROOT / "tests" / "site_build" / f"test_{step}.py").exists(), step
    main = (ROOT / "build.py").read_text().split("def main", 1)[1]
    called = set(re.findall(r"\b([a-z]+)\.[a-z_]+\(", main)) & set(STEPS)
    assert called == set(STEPS) - {"bokehjs", "formulas"}  # BokehJS is patched by the static step, the formulas typeset by pages


def test_a_change_in_the_build_steps_rebuilds_the_site():
    """make build runs again when any file it is made from changes: sitebuild/ among them."""
    result = subprocess.run(["make", "-s", "--no-print-directory", "--eval", "print-sources: ; @echo $(SOURCES)",
                             "print-sources"], cwd=ROOT, capture_output=True, text=True)
    sources = set(result.stdout.split())
    assert {"build.py", "pins.toml", "pyproject.toml", "sitebuild/__init__.py"} <= sources, result.stderr
    assert {f"sitebuild/{step}.py" for step in STEPS} <= sources


def test_make_test_runs_every_test_directory():
    """`make test` names the directories it runs (tests/lane.sh, which both lanes run); one left
    out (tests/js was, for a while) would pass unseen, as pytest's per-directory count only covers
    what it was asked to run."""
    from tests.conftest import KNOWN

    recipe = (ROOT / "Makefile").read_text()
    assert "bash tests/lane.sh gate" in recipe.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "bash tests/lane.sh slow" in recipe.split("\ntest-slow:", 1)[1].split("\n\n", 1)[0]
    ran = set(re.findall(r"\btests/(\w+)", (ROOT / "tests" / "lane.sh").read_text()))
    with_tests = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert with_tests <= ran, f"make test leaves out tests/{sorted(with_tests - ran)}"
    assert with_tests <= set(KNOWN), "tests/conftest.py KNOWN must name every test directory"


def test_no_two_test_files_share_a_name():
    """make test collects tests/sim, ui, site_build and js in one pytest run, which imports each
    test file by its base name: two of one name stop the whole run at collection."""
    names = [p.name for p in (ROOT / "tests").rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []
