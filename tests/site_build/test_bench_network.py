"""bench/network.py's pure parts: the link's arithmetic on a made-up clock, the gzip-by-extension
rule and the server that applies it, the PSS summed over a made-up /proc (the bench itself loads
the built site in Chromium and prints; nothing here is timed)."""

from __future__ import annotations

import gzip
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bench import network

ROOT = Path(__file__).resolve().parents[2]
CHUNK_S = 16384 / 1.25e6  # one 16 KiB chunk at 10 Mbit/s (1.25 MB/s): 13.1072 ms


class Clock:
    """time.monotonic and time.sleep of a made-up clock; each sleep wakes `late` seconds late."""

    def __init__(self, late: float = 0.0):
        self.now, self.late, self.writes = 0.0, late, []

    def sleep(self, seconds: float) -> None:
        self.now += seconds + self.late

    def write(self, chunk: bytes) -> None:
        self.writes.append((self.now, len(chunk)))


def test_a_chunk_waits_for_every_chunk_asked_for_before_it_and_idle_time_is_not_banked():
    link = network.Link(10, 50)
    assert (link.bytes_per_s, link.rtt_s) == (1.25e6, 0.05)
    assert link.slot(16384, 0.0) == pytest.approx(CHUNK_S)
    assert link.slot(16384, 0.0) == pytest.approx(2 * CHUNK_S)  # asked at the same time: behind the first
    assert link.slot(8192, 1.0) == pytest.approx(1.0 + CHUNK_S / 2)  # after a second idle: no burst
    assert network.Link(None, 0).slot(10**9, 5.0) == 5.0  # loopback: no shaping


def test_a_response_crosses_in_chunks_at_the_links_rate_even_when_sleeps_wake_late():
    clock = Clock(late=0.004)
    link = network.Link(10, 50, clock=lambda: clock.now, sleep=clock.sleep)
    link.carry(clock.write, bytes(40_000), "/a.bin")
    assert [n for _, n in clock.writes] == [16384, 16384, 7232]
    # 40 kB at 1.25 MB/s is 32 ms; only the last sleep's lateness shows
    assert clock.writes[-1][0] == pytest.approx(0.032 + 0.004)
    assert link.carried(0, float("inf")) == 40_000 and link.carried(0, None) is None
    assert {path for _, _, path in link.log} == {"/a.bin"}


def test_two_responses_at_once_share_the_link_and_end_together():
    """1 MB each, their chunks asked for in turn (as two connections do): both end at 2 MB over
    the rate, 1.6 s, where either alone would take 0.8 s."""
    link = network.Link(10, 50)
    due = {"a": 0.0, "b": 0.0}
    for chunk in [16384] * 61 + [1_000_000 - 61 * 16384]:
        for name in due:
            due[name] = link.slot(chunk, due[name])
    assert network.Link(10, 50).slot(1_000_000, 0) == pytest.approx(0.8)
    assert due["b"] == pytest.approx(1.6) and due["a"] == pytest.approx(1.6 - 576 / 1.25e6)


@pytest.mark.parametrize("name, zipped", [
    ("running-sum.html", True), ("assets/js/main.js", True), ("lab.css", True), ("build-info.json", True),
    ("pyodide/pyodide.asm.wasm", True), ("icon.svg", True),
    ("pyodide/python_stdlib.zip.gz", False), ("pyodide/lab-snapshot-gates.bin.gz", False),
    ("pyodide/numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl", False), ("lab-sans-400.woff2", False),
    ("pyodide/lab-packages.bin", False), ("notes.js.map", False),
])
def test_a_compressing_host_gzips_by_extension_only(name, zipped):
    assert network.gzipped_by_host(name) is zipped


def test_the_server_sends_gzip_by_extension_with_serve_pys_headers_and_counts_what_it_sent(tmp_path):
    script = b"const x = 1;\n" * 2000
    (tmp_path / "a.js").write_bytes(script)
    (tmp_path / "b.bin").write_bytes(bytes(range(256)) * 100)
    (tmp_path / "floor.js").write_text("// served as if the site held it")
    link = network.Link(None, 0)
    server = network.serve_on(link, tmp_path, {"floor.html": tmp_path / "floor.js"})
    base = f"http://127.0.0.1:{server.server_address[1]}/"

    def get(path, **headers):
        with urllib.request.urlopen(urllib.request.Request(base + path, headers={"Accept-Encoding": "gzip", **headers})) as r:
            return r.headers, r.read()

    try:
        headers, body = get("a.js")
        assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == script
        assert int(headers["Content-Length"]) == len(body) < len(script) / 10
        assert headers["Content-Type"] == "text/javascript" and headers["Cache-Control"] == "no-store"
        assert "frame-ancestors" in headers["Content-Security-Policy"]  # serve.py's header policy
        # what crossed the link: the gzip body and the headers, not the file
        assert len(body) < link.carried(0, float("inf")) < len(body) + 1500
        assert {path for _, _, path in link.log} == {"/a.js"}
        headers, body = get("b.bin")
        assert headers["Content-Encoding"] is None and body == bytes(range(256)) * 100
        assert gzip.decompress(get("floor.html")[1]) == b"// served as if the site held it"
        server.cache_control = None  # serve.py's no-cache: a second visit revalidates
        last = get("a.js")[0]
        assert last["Cache-Control"] == "no-cache"
        with pytest.raises(urllib.error.HTTPError, match="304"):
            get("a.js", **{"If-Modified-Since": last["Last-Modified"]})
    finally:
        server.shutdown()
        server.server_close()


def test_memory_is_the_pss_of_the_browsers_started_under_the_bench_and_their_children(tmp_path):
    """A made-up /proc: this bench (100) runs Playwright's driver (101), which starts Chromium
    (102); its zygote, renderers, GPU process count, whatever their flags; the driver does not,
    nor another suite's Chromium (200), nor a process gone while read (107)."""

    def process(pid: int, parent: int, command: bytes, pss_kb: int | None) -> None:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(command)
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (chrom (x) y) S {parent} 1 1 0")
        if pss_kb is not None:
            (tmp_path / str(pid) / "smaps_rollup").write_text(
                f"55d0-7ffe ---p 00000000 00:00 0 [rollup]\nRss: {2 * pss_kb} kB\nPss: {pss_kb} kB\nPss_Anon: 7 kB\n")

    process(100, 1, b"/work/main/.venv/bin/python\0bench/network.py\0", 40_000)
    process(101, 100, b"/work/main/.venv/lib/playwright/driver/node\0cli.js\0", 60_000)
    process(102, 101, b"/usr/lib/chromium/chromium\0--headless\0", 100_000)
    process(103, 102, b"/usr/lib/chromium/chromium --type=zygote\0", 20_000)
    process(104, 103, b"/usr/lib/chromium/chromium --type=renderer --lang=en-US\0", 300_000)
    process(105, 102, b"/usr/lib/chromium/chromium --type=gpu-process\0", 50_000)
    process(106, 102, b"/usr/lib/chromium/chrome_crashpad_handler\0", 1_000)  # the browser's child: counts
    process(107, 102, b"/usr/lib/chromium/chromium --type=utility\0", None)  # ended
    process(200, 1, b"/usr/lib/chromium/chromium\0--headless\0", 900_000)  # not started by this bench
    process(201, 200, b"/usr/lib/chromium/chromium --type=renderer\0", 900_000)
    (tmp_path / "self").mkdir()
    expected_kb = 100_000 + 20_000 + 300_000 + 50_000 + 1_000
    assert network.browser_pss_mb(100, "/usr/bin/chromium", tmp_path) == pytest.approx(expected_kb * 1024 / 1e6)
    assert network.browser_pss_mb(999, "/usr/bin/chromium", tmp_path) == 0  # no browser started


def test_the_course_page_embeds_each_page_from_the_labs_origin():
    html = network.course_page("http://127.0.0.1:8123/", ["running-sum", "gates"])
    assert html.count("<iframe") == 2
    assert '<iframe src="http://127.0.0.1:8123/gates.html?embed=1" title="gates">' in html


@pytest.mark.parametrize("args, message", [
    (["--runs", "0"], "error: --runs must be at least 1, not 0"),
    (["--pages", "nope"], "error: no page nope in "),
    (["--profiles", "fast"], "error: profile 'fast' is not R/RTT"),
])
def test_bad_options_get_one_line(tmp_path, args, message):
    (tmp_path / "index.html").write_text("")
    (tmp_path / "running-sum.html").write_text("")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "network.py"), "--site", str(tmp_path),
                          "--pages", "running-sum", *args], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and out.stderr.startswith(message), out.stderr
