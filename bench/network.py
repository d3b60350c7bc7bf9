"""The built site over a slow link: cold pages against the floor, two pages in a row, a course page.

    .venv/bin/python bench/network.py [--profiles 10/50,50/20,loopback] [--pages running-sum,gates,hybrid]
                                      [--runs 3] [--site DIR]

The site is served with serve.py's headers through ONE simulated link (Link): R Mbit/s shared by
every response in 16 KiB chunks, first come first served whatever the connection, one round trip
(RTT) waited before each response; `.html .js .css .json .wasm .svg` gzipped as a compressing
static host sends them, other files as they are. A profile is R/RTT (Mbit/s, ms) or loopback (no
shaping). MB: what the server wrote (headers, bodies after gzip) from the navigation to a mark.
Medians over --runs, per page, cold (a new context per load, service workers blocked, no-store;
each visit's new window first left to build its own toolbar: bench/__init__.py settle):
- plot: the page built ahead of time on screen (window.lab.timings.firstPlot, as bench/boot.py
  reads it); x block: over the same page's plot with its worker's downloads (pyodide/) aborted;
- live: the settings respond (window.lab.timings.live); x floor: over the live of bench/boot.py's
  floor, a bare page whose worker starts the site's Pyodide and imports numpy (served from memory);
- mem: once live and whole, the PSS of this bench's Chromium summed over its process tree
  (/proc/<pid>/smaps_rollup) minus the same browser idle on about:blank (at each run's start).
Then, per run, cache on (serve.py's Cache-Control: no-cache) and service workers allowed:
- two pages in a row: the first two pages in one tab, the second opened once the first is live:
  the second's plot, live and MB (the service worker registers once a page has been live 5 s,
  assets/js/offline.js: its first install does not share the link here; the second page takes
  the shared heap from the browser's cache, in parts a cache in memory keeps);
- a course page of another origin (a second server on another port, the same link) embedding
  the pages (?embed=1), all in view, untouched for 20 s: MB carried and memory at 20 s, each
  embed's first plot (s from the course page's navigation; "-": not by then). An embed starts
  Python only once it is used (assets/js/wanted.js): this is what embeds cost while read.
Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "dist" / "site"
sys.path.insert(0, str(ROOT))

from bench import CHROMIUM, boot, settle  # noqa: E402

CHUNK_BYTES = 16 * 1024  # what the link carries at a time: fine enough that responses interleave
GZIP_SUFFIXES = (".html", ".js", ".css", ".json", ".wasm", ".svg")  # what a static host compresses
PROFILES = {"10/50": (10.0, 50.0), "50/20": (50.0, 20.0), "loopback": (None, 0.0)}
COURSE_S = 20  # the course page is left untouched this long
LIVE = "window.lab?.state.live === true || !!window.lab?.state.failed"
JOINED = "!window.lab.timings.firstPlot || !!window.lab.timings.joined || !!window.lab.state.failed"
MARKS = "() => ({origin: performance.timeOrigin, timings: window.lab.timings, failed: window.lab.state.failed || null})"


class Link:
    """One link shared by every response: `mbit_s` Mbit/s (None: unshaped), `rtt_ms` waited
    before each response. `clock` and `sleep` are time.monotonic and time.sleep but in tests."""

    def __init__(self, mbit_s: float | None, rtt_ms: float, clock=time.monotonic, sleep=time.sleep):
        self.bytes_per_s = mbit_s * 1e6 / 8 if mbit_s else None
        self.rtt_s = rtt_ms / 1000
        self.clock, self.sleep = clock, sleep
        self.free_at = 0.0  # when the link has carried every chunk asked for so far
        self.log: list[tuple[float, int, str]] = []  # (epoch ms the chunk was written, bytes, path)
        self.lock = threading.Lock()

    def slot(self, nbytes: int, now: float) -> float:
        """When a chunk of `nbytes` asked for at `now` has crossed the link: after every chunk
        asked for before it (first come first served), never before `now` + its own time."""
        if self.bytes_per_s is None:
            return now
        with self.lock:
            self.free_at = max(now, self.free_at) + nbytes / self.bytes_per_s
            return self.free_at

    def carry(self, write, data: bytes, path: str = "") -> None:
        """write(data) a chunk at a time, each once the link has carried it. Each chunk after the
        first is asked for when the one before was due: a sleep that wakes late loses no link time."""
        due = None
        for at in range(0, len(data), CHUNK_BYTES):
            chunk = data[at:at + CHUNK_BYTES]
            now = self.clock()
            due = self.slot(len(chunk), now if due is None else min(now, due))
            wait = due - self.clock()
            if wait > 0:
                self.sleep(wait)
            write(chunk)
            with self.lock:
                self.log.append((time.time() * 1000, len(chunk), path))

    def carried(self, start_ms: float, end_ms: float | None) -> int | None:
        """Bytes written between two epoch times (ms); None without an end."""
        if end_ms is None:
            return None
        with self.lock:
            return sum(n for t, n, _ in self.log if start_ms <= t <= end_ms)


def gzipped_by_host(name: str) -> bool:
    """Whether a compressing static host sends this file gzipped (by its extension only: the
    runtime's .gz and the wheels are compressed already and go as they are)."""
    return Path(name).suffix in GZIP_SUFFIXES


_gzipped: dict[tuple, bytes] = {}


def gzip_body(path: Path) -> bytes:
    """A host compresses a file once and keeps it (until the file changes: a rebuild)."""
    key = (path, path.stat().st_mtime_ns, path.stat().st_size)
    if key not in _gzipped:
        _gzipped[key] = gzip.compress(path.read_bytes(), 6)
    return _gzipped[key]


class _Carried:
    """A handler's wfile whose every write goes through its server's link."""

    def __init__(self, raw, handler):
        self.raw, self.handler = raw, handler

    def write(self, data) -> int:
        self.handler.server.link.carry(self.raw.write, bytes(data), getattr(self.handler, "path", ""))
        return len(data)

    def __getattr__(self, name: str):  # flush, close, closed: the socket's
        return getattr(self.raw, name)


class OnTheLink:
    """Mixed into serve.py's handler (its MIME types and policy headers kept): an RTT before each
    response, every byte through the link, gzip by extension, the server's Cache-Control (None:
    serve.py's), and `server.extra` (path -> file) served as if the site held it."""

    zipped: bytes | None = None

    def setup(self) -> None:
        super().setup()
        self.wfile = _Carried(self.wfile, self)

    def do_GET(self) -> None:
        time.sleep(self.server.link.rtt_s)
        super().do_GET()

    def translate_path(self, path: str) -> str:
        extra = self.server.extra.get(urllib.parse.urlsplit(path).path.lstrip("/"))
        return str(extra) if extra else super().translate_path(path)

    def send_head(self):
        path = Path(self.translate_path(self.path))
        path = path / "index.html" if path.is_dir() else path
        self.zipped = (gzip_body(path) if gzipped_by_host(path.name) and path.is_file()
                       and "gzip" in self.headers.get("Accept-Encoding", "") else None)
        return super().send_head()

    def send_header(self, key: str, value: str) -> None:
        if key.lower() == "cache-control" and self.server.cache_control:
            value = self.server.cache_control
        if key.lower() == "content-length" and self.zipped is not None:
            value = str(len(self.zipped))
            super().send_header("Content-Encoding", "gzip")
        super().send_header(key, value)

    def copyfile(self, source, outputfile) -> None:
        outputfile.write(self.zipped if self.zipped is not None else source.read())  # one body, one stream


def serve_on(link: Link, directory: Path, extra: dict[str, Path], policy: bool = True):
    """serve.py's server for `directory`, its handler put on the link; in a thread."""
    from serve import make_server  # noqa: PLC0415

    server = make_server(directory, 0, policy=policy)
    made = server.RequestHandlerClass  # functools.partial(handler class, directory=...)
    server.RequestHandlerClass = type(made)(type("Linked", (OnTheLink, made.func), {}), *made.args, **made.keywords)
    server.link, server.extra, server.cache_control = link, extra, "no-store"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def processes(proc: Path) -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, program name) of every process readable in `proc`."""
    table = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # a child rewrites its command line as one string: "/usr/lib/chromium/chromium --type=..."
            command = (entry / "cmdline").read_bytes().split(b"\0")[0].split(b" ")[0].decode(errors="replace")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])  # comm may hold ")"
        except (OSError, IndexError, ValueError):  # ended while being read
            continue
        table[int(entry.name)] = (parent, Path(command).name)
    return table


def browser_pss_mb(ancestor: int, executable: str = CHROMIUM, proc: Path = Path("/proc")) -> float:
    """PSS (MB) summed over the process tree of every browser started under `ancestor` (this
    bench's pid: Playwright's driver starts it): a process of the executable's name whose parent
    has another name, and all its descendants. Browsers that others started are not counted."""
    table = processes(proc)
    children = defaultdict(list)
    for pid, (parent, _) in table.items():
        children[parent].append(pid)

    def tree(pid: int) -> list[int]:
        return [pid] + [d for c in children[pid] for d in tree(c)]

    name = Path(executable).name
    roots = [p for p in tree(ancestor) if table.get(p, (0, ""))[1] == name
             and table.get(table[p][0], (0, ""))[1] != name]
    kb = 0
    for pid in (p for r in roots for p in tree(r)):
        try:
            rollup = (proc / str(pid) / "smaps_rollup").read_text()
        except OSError:  # ended, or a kernel thread
            continue
        kb += sum(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:"))
    return kb * 1024 / 1e6


class Bench:
    def __init__(self, browser, link: Link, servers, base: str, timeout_s: float):
        self.browser, self.link, self.servers, self.base = browser, link, servers, base
        self.timeout_ms = int(timeout_s * 1000)
        self.idle_mb = 0.0  # this run's browser idle on about:blank (the browser's own drifts run by run)

    def memory(self) -> float:
        return browser_pss_mb(os.getpid()) - self.idle_mb

    def wait(self, page, condition: str) -> None:
        page.wait_for_function(condition, timeout=self.timeout_ms, polling=50)

    def figures(self, start_ms: float, page) -> dict:
        marks = page.evaluate(MARKS)
        t = marks["timings"] or {}
        at = {k: None if t.get(k) is None else marks["origin"] + t[k] for k in ("firstPlot", "live")}
        return {"plot": t.get("firstPlot"), "live": t.get("live"), "failed": marks["failed"],
                "mb_plot": self.link.carried(start_ms, at["firstPlot"]), "mb_live": self.link.carried(start_ms, at["live"])}

    def visit(self, how, cache: str | None, **options) -> dict:
        """how(a page of a new browser context), the servers sending `cache` (None: serve.py's);
        a timeout or an error is reported and the other loads go on."""
        for server in self.servers:
            server.cache_control = cache
        context = self.browser.new_context(**options)
        try:
            page = context.new_page()
            settle()  # the new window's own toolbar built first (bench/__init__.py)
            return how(context, page)
        except Exception as e:
            return {"failed": str(e).splitlines()[0][:200]}
        finally:
            context.close()

    def idle(self) -> float | dict:
        """Measures the browser idle on about:blank: what memory() leaves out until the next idle()."""
        def how(_, page):
            page.goto("about:blank")
            page.wait_for_timeout(2000)
            self.idle_mb = browser_pss_mb(os.getpid())
            return self.idle_mb
        return self.visit(how, None)

    def cold(self, file: str, block_python: bool = False) -> dict:
        def how(context, page):
            if block_python:
                context.route("**/pyodide/**", lambda route: route.abort())
            start = time.time() * 1000
            page.goto(self.base + file, wait_until="commit")
            if block_python:  # the page says it failed (Python did not load): expected here
                self.wait(page, "!!window.lab?.timings?.firstPlot")
                return {**self.figures(start, page), "failed": None}
            self.wait(page, LIVE)
            self.wait(page, JOINED)
            return {**self.figures(start, page), "memory": self.memory()}
        return self.visit(how, "no-store", service_workers="block")

    def in_a_row(self, first: str, second: str) -> dict:
        def how(_, page):
            page.goto(self.base + first + ".html", wait_until="commit")
            self.wait(page, LIVE)
            start = time.time() * 1000
            page.goto(self.base + second + ".html", wait_until="commit")
            self.wait(page, LIVE)
            return self.figures(start, page)
        return self.visit(how, None, service_workers="allow")

    def course(self, url: str, slugs: list[str]) -> dict:
        def how(_, page):
            start = time.time() * 1000
            page.goto(url, wait_until="commit")
            page.wait_for_timeout(COURSE_S * 1000)
            end, memory, origin = time.time() * 1000, self.memory(), page.evaluate("performance.timeOrigin")
            plots = {}
            for frame in page.frames[1:]:
                at = frame.evaluate("window.lab?.timings?.firstPlot ? performance.timeOrigin + window.lab.timings.firstPlot : null")
                plots[Path(urllib.parse.urlsplit(frame.url).path).stem] = None if at is None else at - origin
            return {"mb": self.link.carried(start, end), "memory": memory, "plots": plots}
        # a window tall enough for every embed to be in view: each may paint untouched
        return self.visit(how, None, service_workers="allow", viewport={"width": 1280, "height": 720 * len(slugs)})


def course_page(base: str, slugs: list[str]) -> str:
    """A course's page that embeds each page of `base` (another origin) as Share's snippet does."""
    frames = "".join(f'<p>Try it:</p>\n<iframe src="{base}{s}.html?embed=1" title="{s}"></iframe>\n' for s in slugs)
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>A course page</title>\n<style>'
            "body { font: 16px sans-serif; margin: 0 2em; } iframe { width: 100%; height: 600px; border: 0; }</style>\n"
            f"</head><body><h1>A lesson on linear attention</h1>\n{frames}</body></html>\n")


def measure(bench: Bench, pages: list[str], runs: int, course_url: str) -> dict:
    out: dict[str, list] = defaultdict(list)
    for run in range(runs):  # interleaved, so drifting load hits all alike
        out["idle"].append(bench.idle())
        for name, file in [("floor", boot.FLOOR_NAME)] + [(p, f"{p}.html") for p in pages]:
            out[name].append(r := bench.cold(file))
            if name != "floor":
                out[name + ":blocked"].append(bench.cold(file, block_python=True))
            state = f"FAILED: {r['failed']}" if r.get("failed") else f"live {(r['live'] or 0) / 1000:.2f} s"
            print(f"  run {run + 1}/{runs} {name:12s} {state}", file=sys.stderr, flush=True)
        if len(pages) > 1:
            out["row"].append(bench.in_a_row(pages[0], pages[1]))
        out["course"].append(bench.course(course_url, pages))
        print(f"  run {run + 1}/{runs} two in a row, course page: done", file=sys.stderr, flush=True)
    return out


def fmt(value, scale: float = 1.0, width: int = 7, digits: int = 2) -> str:
    return f"{'-':>{width}s}" if value is None else f"{value / scale:{width}.{digits}f}"


def report(profile: str, pages: list[str], out: dict, runs: int) -> None:
    def m(name, key):
        return boot.median([r.get(key) for r in out.get(name, []) if not r.get("failed")])

    def failures(*names) -> str:
        failed = [r["failed"] for n in names for r in out.get(n, []) if isinstance(r, dict) and r.get("failed")]
        return f"  ({len(failed)} failed: {failed[0]})" if failed else ""

    def secs(ms) -> str:
        return "-" if ms is None else f"{ms / 1000:.2f} s"

    idle = [v for v in out["idle"] if isinstance(v, float)] or [0.0]
    floor_live = m("floor", "live")
    mbit, rtt = parse_profile(profile)
    print(f"\n{f'{mbit:g} Mbit/s, RTT {rtt:g} ms' if mbit else 'loopback, no shaping'}: median of {runs} run(s); "
          f"s from navigation start; MB carried on the link (as sent, gzip); memory: browser PSS minus "
          f"the same browser idle on about:blank in the same run ({min(idle):.0f}-{max(idle):.0f} MB)")
    header = f"{'page':14s} {'plot s':>7s} {'x block':>7s} {'live s':>7s} {'x floor':>7s} {'MB plot':>7s} {'MB live':>7s} {'mem MB':>7s}"
    print(header + "\n" + "-" * len(header))
    for name in ["floor", *pages]:
        plot, blocked, live, mem = m(name, "plot"), m(name + ":blocked", "plot"), m(name, "live"), m(name, "memory")
        print(f"{name:14s} {fmt(plot, 1000)} {fmt(plot / blocked if plot and blocked else None)} {fmt(live, 1000)} "
              f"{fmt(live / floor_live if live and floor_live else None)} {fmt(m(name, 'mb_plot'), 1e6, digits=1)} "
              f"{fmt(m(name, 'mb_live'), 1e6, digits=1)} {fmt(mem, digits=0)}"
              + failures(name, name + ":blocked"))
    if out.get("row"):
        print(f"two pages in a row, {pages[1]} after {pages[0]} (one tab, cache and service worker on): "
              f"plot {secs(m('row', 'plot'))}, live {secs(m('row', 'live'))}, MB to plot "
              f"{fmt(m('row', 'mb_plot'), 1e6, 0, 1)}, to live {fmt(m('row', 'mb_live'), 1e6, 0, 1)}" + failures("row"))
    course = [c for c in out["course"] if not c.get("failed")]
    plots = ", ".join(f"{s} {secs(boot.median([c['plots'].get(s) for c in course]))}" for s in pages)
    print(f"course page, {len(pages)} embeds from another origin, {COURSE_S} s untouched: MB carried "
          f"{fmt(boot.median([c['mb'] for c in course]), 1e6, 0, 1)}, memory "
          f"{fmt(boot.median([c['memory'] for c in course]), 1, 0, 0)} MB; "
          f"first plot: {plots}" + failures("course"))


def parse_profile(text: str) -> tuple[float | None, float]:
    if text in PROFILES:
        return PROFILES[text]
    try:
        mbit, rtt = (float(x) for x in text.split("/"))
    except ValueError:
        sys.exit(f"error: profile {text!r} is not R/RTT (Mbit/s, ms) nor loopback")
    return mbit, rtt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", default="10/50,50/20,loopback", help="R/RTT (Mbit/s, ms) or loopback, comma-separated")
    parser.add_argument("--pages", default="running-sum,gates,hybrid", help="comma-separated slugs")
    parser.add_argument("--runs", type=int, default=3, help="loads of each kind per profile (default 3)")
    parser.add_argument("--site", type=Path, default=SITE, help="the built site (default dist/site)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per load before giving up")
    args = parser.parse_args()
    site, pages, profiles = args.site.resolve(), args.pages.split(","), args.profiles.split(",")
    if args.runs < 1:
        sys.exit(f"error: --runs must be at least 1, not {args.runs}")
    if not (site / "index.html").exists():
        sys.exit(f"error: {site}/index.html is missing: build the site first (`make build`)")
    if missing := [p for p in pages if not (site / f"{p}.html").exists()]:
        sys.exit(f"error: no page {', '.join(missing)} in {site}")
    for p in profiles:
        parse_profile(p)
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    from sitebuild.runtime import packed_sizes  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="lab-network-") as tmp:
        extra = {boot.FLOOR_NAME: boot.FLOOR_PAGE, boot.FLOOR_SCRIPT: boot.FLOOR_JS,
                 boot.FLOOR_WORKER: boot.FLOOR_WORKER_JS.replace("__PACKED__", json.dumps(packed_sizes(site)))}
        for name, text in extra.items():
            (Path(tmp) / name).write_text(text)
        for path in [*site.rglob("*"), *Path(tmp).iterdir()]:
            if gzipped_by_host(path.name) and path.is_file():
                gzip_body(path)  # compressed before any clock runs, as a host's cache holds them
        link = Link(None, 0)
        lab = serve_on(link, site, {name: Path(tmp) / name for name in extra})
        base = f"http://127.0.0.1:{lab.server_address[1]}/"
        (Path(tmp) / "course").mkdir()
        (Path(tmp) / "course" / "index.html").write_text(course_page(base, pages))
        other = serve_on(link, Path(tmp) / "course", {}, policy=False)
        course_url = f"http://127.0.0.1:{other.server_address[1]}/"
        try:
            with sync_playwright() as pw:  # closes the browser on the way out
                browser = boot.chromium_launch(pw)
                for profile in profiles:
                    link = lab.link = other.link = Link(*parse_profile(profile))
                    print(f"{profile}:", file=sys.stderr, flush=True)
                    out = measure(Bench(browser, link, [lab, other], base, args.timeout), pages, args.runs, course_url)
                    report(profile, pages, out, args.runs)
        finally:
            for server in (lab, other):
                server.shutdown()
                server.server_close()


if __name__ == "__main__":
    main()
