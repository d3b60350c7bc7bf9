"""Every run says how many tests each test directory collected, and fails when a directory it
was asked to run collected none: a directory pytest silently skips (a name in its
norecursedirs, an import error turned skip) shows as 0 instead of passing unseen.

Two lanes, one suite (`--lane`; `make test` runs the gate, `make test-slow` the slow lane):
- gate: every test but those marked `slow`, with hypothesis' `ci` profile (a quarter of each
  property's examples, `lanes.examples`);
- slow: the tests marked `slow` (what only repeats a path the gate takes: more screen sizes, more
  broken files, more scenes, a second build of the same bytes) and every hypothesis property
  again with the `full` profile (all its examples);
- all (the default when no lane is named): everything, with the profile HYPOTHESIS_PROFILE
  names (`ci` if none).
With LAB_DURATIONS=<file>, each test's time (setup, call and teardown) is appended to the file,
for `make test` to print a lane's ten slowest tests.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("full", deadline=None)  # hypothesis' own 100 examples: lanes.examples(n) = n
settings.register_profile("ci", deadline=None, max_examples=25)  # a quarter of each
LANES = ("all", "gate", "slow")

TESTS = Path(__file__).resolve().parent
KNOWN = ("sim", "ui", "site_build", "js", "e2e")  # each must collect tests whenever it is run


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--lane", choices=LANES, default="all",
                     help="gate: all but the tests marked slow, hypothesis' ci profile; slow: the tests "
                          "marked slow and every hypothesis property with the full profile")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: repeats a path the gate takes (run by make test-slow)")
    lane = config.getoption("--lane")
    settings.load_profile("full" if lane == "slow" else os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _is_property(item: pytest.Item) -> bool:
    return bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    lane = config.getoption("--lane")
    if lane == "all":
        return
    if lane == "gate":
        keep = [i for i in items if i.get_closest_marker("slow") is None]
    else:
        keep = [i for i in items if i.get_closest_marker("slow") is not None or _is_property(i)]
    dropped = [i for i in items if i not in set(keep)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    path = os.environ.get("LAB_DURATIONS")
    if not path or os.environ.get("PYTEST_XDIST_WORKER"):  # the controller writes each test once
        return
    times = _durations.setdefault(report.nodeid, 0.0)
    _durations[report.nodeid] = times + report.duration
    if report.when == "teardown":
        with open(path, "a") as f:
            f.write(f"{_durations.pop(report.nodeid):.2f} {report.nodeid}\n")


_durations: dict[str, float] = {}


def _directory(path: Path) -> str:
    try:
        return path.resolve().relative_to(TESTS).parts[0]
    except (ValueError, IndexError):
        return "(outside tests/)"


def _expected(config: pytest.Config) -> list[str]:
    """The test directories this run covers whole (a keyword or marker filter covers none)."""
    if config.option.keyword or config.option.markexpr or config.getoption("--lane") == "slow":
        return []
    dirs = set()
    for arg in config.args:
        path = Path(arg.split("::")[0]).resolve()
        if "::" in arg or not path.is_dir():
            continue
        if path == TESTS:
            dirs.update(KNOWN)
        elif path.parent == TESTS:
            dirs.add(path.name)
    all_dirs = {p.name for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    return sorted(dirs & (all_dirs | set(KNOWN)))


def _count(config: pytest.Config, paths) -> None:
    counts = Counter(_directory(path) for path in paths)
    expected = _expected(config)
    for name in expected:
        counts.setdefault(name, 0)
    config._lab_counts = counts
    config._lab_empty = [name for name in expected if counts[name] == 0]


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.items or not hasattr(session.config, "_lab_counts"):
        _count(session.config, (item.path for item in session.items))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids) -> None:
    """With pytest-xdist (make test runs the browser tests on two workers) the controller collects
    nothing itself: it counts what the first worker collected (every worker collects the same)."""
    config = node.config
    if getattr(config, "_lab_counts", None) is None or not sum(config._lab_counts.values()):
        _count(config, (config.rootpath / nodeid.split("::")[0] for nodeid in ids))


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    counts = getattr(config, "_lab_counts", None)
    if counts is None:
        return
    skipped = Counter(_directory(Path(str(r.fspath))) for r in terminalreporter.stats.get("skipped", []))
    terminalreporter.write_line("tests collected per directory: " + ", ".join(
        f"tests/{name} {n}" + (f" ({skipped[name]} skipped)" if skipped[name] else "")
        for name, n in sorted(counts.items())))
    for name in config._lab_empty:
        terminalreporter.write_line(f"error: tests/{name} collected no test", red=True, bold=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if getattr(session.config, "_lab_empty", None) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
