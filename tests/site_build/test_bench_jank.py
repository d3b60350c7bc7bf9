"""bench/jank.py's arithmetic on hand-worked task lists (the bench itself times the built site in
Chromium and prints; nothing here is timed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench import jank

ROOT = Path(__file__).resolve().parents[2]


def test_total_blocking_time_is_each_tasks_excess_over_50_ms():
    assert jank.total_blocking_ms([30, 60, 250]) == 210  # 0 + 10 + 200
    assert jank.total_blocking_ms([50, 50.0]) == 0  # exactly 50 ms blocks nothing
    assert jank.total_blocking_ms([]) == 0


def test_a_window_cuts_off_a_tasks_part_before_its_start_but_not_its_end():
    tasks = [(0, 100), (150, 60), (900, 300), (1200, 80), (10, 30)]  # (start, duration) ms
    # (0, 100) keeps 50 ms after t = 50; (900, 300) began inside and blocked until 1200;
    # (1200, 80) began after the window; (10, 30) ended before it
    assert jank.tasks_in_window(tasks, 50, 1000) == [50, 60, 300]
    assert jank.total_blocking_ms(jank.tasks_in_window(tasks, 50, 1000)) == 260  # 0 + 10 + 250


def test_median_of_the_values_present():
    assert jank.median([3, 1, 2]) == 2
    assert jank.median([4, None, 1, 3, 2]) == 2.5
    assert jank.median([None, None]) is None


def test_steps_painted_count_frames_not_presses():
    # frames (time, t, presses they answer): two presses queued behind one task paint once
    steps = [(100, 1, [90]), (600, 3, [200, 450]), (700, 4, []), (900, 5, [50])]
    assert jank.steps_painted(steps, 80, 500) == 2
    assert jank.slowest_press_ms(steps, 80, 500) == 400  # pressed at 200, painted at 600
    assert jank.slowest_press_ms(steps, 1000, 2000) is None


def test_window_figures_and_the_goals_they_meet():
    load = {"tasks": [(100, 260), (500, 90), (900, 40)], "gaps": [(90, 280)],
            "steps": [(380, 1, [150, 300]), (700, 2, [650])], "sent": [150, 300, 650, 2000],
            "presses": [150, 650]}
    f = jank.window_figures(load, 120, 800)
    assert f == {"over_200": 1, "longest": 240, "tbt": 190 + 40, "gap": 250, "painted": 2,
                 "pressed": 3, "missed": 1, "slowest": 230}
    assert jank.window_figures(load, None, 800) == {}

    def goals(longest, tbt, painted, pressed):
        quiet = {"longest": 0, "tbt": 0, "painted": 0, "pressed": 0}
        return jank.goals({"boot": {**quiet, "longest": longest, "tbt": tbt},
                           "change": {**quiet, "longest": longest, "painted": painted, "pressed": pressed}})

    assert set(goals(200, 300, 9, 10).values()) == {True}  # the bounds themselves are met
    assert set(goals(201, 301, 8, 10).values()) == {False}
    assert goals(0, 0, 0, 0)["change: steps keep painting"] is None  # nothing was pressed
    assert [jank.verdict(v) for v in (True, False, None)] == ["met", "not met", "-"]


@pytest.mark.parametrize("args, message", [
    (["--runs", "0"], "error: --runs must be at least 1, not 0"),
    (["--pages", "nope"], "error: no page nope; the pages: running-sum,"),
])
def test_bad_options_get_one_line(tmp_path, args, message):
    (tmp_path / "index.html").write_text("")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "jank.py"), "--site", str(tmp_path), *args],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and out.stderr.startswith(message), out.stderr


def test_the_browsers_cpu_is_summed_over_its_processes_only(tmp_path):
    """bench/boot.py's CPU count, on a made-up /proc: the browser's processes (named by their
    executable, whatever their flags), not others; a process gone while read is skipped."""
    import os  # noqa: PLC0415

    from bench import boot  # noqa: PLC0415

    tick = os.sysconf("SC_CLK_TCK")

    def process(pid: int, command: bytes, utime: int, stime: int) -> None:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(command)
        # comm may hold spaces and parentheses: the fields are counted after the last ")"
        fields = ["S", *["0"] * 10, str(utime), str(stime), *["0"] * 5]
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (chrom (x) y) " + " ".join(fields))

    process(10, b"/usr/lib/chromium/chromium\0--headless\0", 2 * tick, tick)  # 3 s
    process(11, b"/usr/lib/chromium/chromium --type=renderer --lang=en-US\0", tick // 2, 0)  # 0.5 s: one string
    process(14, b"/usr/lib/chromium/chrome_crashpad_handler\0", 7 * tick, 0)  # another program
    process(12, b"/usr/bin/python3\0serve.py\0", 50 * tick, 0)  # not the browser
    (tmp_path / "13").mkdir()  # ended: no cmdline
    (tmp_path / "self").mkdir()
    assert boot.browser_cpu_s("/usr/bin/chromium", tmp_path) == pytest.approx(3.5)
    assert boot.browser_cpu_s("/usr/lib/chromium/chromium", tmp_path / "missing") is None


def test_a_cold_load_waits_for_the_browser_at_rest():
    """bench/__init__.py settle, on a made-up clock and CPU count: it waits window by window
    while the browser's processes keep working (a new window's own toolbar being built), stops at
    the first quiet window, gives up after its patience, and waits one window where /proc is
    missing."""
    from bench import settle  # noqa: PLC0415

    def run(cpu_s, **kw):
        now, seen = [0.0], iter(cpu_s)
        waited = settle(cpu=lambda: next(seen), sleep=lambda s: now.__setitem__(0, now[0] + s),
                        clock=lambda: now[0], quiet_ms=25, window_ms=250, **kw)
        return round(waited, 3)

    # busy for two windows (0.2 s, then 0.1 s of CPU), then 10 ms in the third: quiet
    assert run([1.0, 1.2, 1.3, 1.31]) == 0.75
    assert run([1.0, 1.001]) == 0.25  # at rest from the start: one window
    assert run([None, None]) == 0.25  # no /proc: one window
    assert run([float(i) for i in range(100)], patience_s=1.0) == 1.0  # never at rest: 1 s


def test_the_worker_alone_page_holds_the_pages_config_and_its_documents_ids():
    """bench/boot.py --alone: the bare page carries the built page's lab-config as it is and
    every model id of its document built ahead of time, once each (what the shell's pageInfo()
    sends, so the worker adopts it); a page without them is named."""
    from bench import boot  # noqa: PLC0415

    config = '{"page": "gates", "link": {"defaults": {"d": 4}}}'
    doc = ('{"doc": {"roots": [{"type": "object", "name": "Column", "id": "p1001", "attributes": '
           '{"children": [{"id": "p1002"}, {"type": "object", "name": "Div", "id": "p1002"}]}}]}}')
    html = (f'<script id="lab-config" type="application/json">{config}</script>\n'
            f'<script id="lab-doc" type="application/json">{doc}</script>')
    bare = boot.alone_page(html, "gates")
    assert f'<script id="lab-config" type="application/json">{config}</script>' in bare
    assert '<script id="bench-ids" type="application/json">["p1001", "p1002"]</script>' in bare
    assert "gates's Python worker alone" in bare and "__" not in bare
    with pytest.raises(ValueError, match="hybrid.html has no lab-config or lab-doc"):
        boot.alone_page(f'<script id="lab-config" type="application/json">{config}</script>', "hybrid")
