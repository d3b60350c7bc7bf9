"""Every run says how many tests each test directory collected, and fails when a directory it
was asked to run collected none: a directory pytest silently skips (a name in its
norecursedirs, an import error turned skip) shows as 0 instead of passing unseen."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
KNOWN = ("sim", "ui", "site_build", "js", "e2e")  # each must collect tests whenever it is run


def _directory(path: Path) -> str:
    try:
        return path.resolve().relative_to(TESTS).parts[0]
    except (ValueError, IndexError):
        return "(outside tests/)"


def _expected(config: pytest.Config) -> list[str]:
    """The test directories this run covers whole (a keyword or marker filter covers none)."""
    if config.option.keyword or config.option.markexpr:
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
