"""Cold start-up of every page in headless Chromium, against the floor of a bare Pyodide + numpy.

    .venv/bin/python bench/boot.py [--runs 3] [--pages running-sum,gates] [--breakdown] [--alone]

Serves dist/site on a free port (serve.py, in a thread) and loads each page cold: a fresh browser
context per load, service workers blocked, each load started once the browser is at rest (the new
window's own toolbar built: bench/__init__.py settle). Per page it prints the medians over the runs of

- MB: the bytes of every file the page and its worker fetched, as served (uncompressed; the
  snapshot's two files are gzip files already)
  and, beside it, what the same files weigh gzipped (what a compressing host would send);
- paint: the first paint (performance 'first-contentful-paint', else 'first-paint');
- plot: the page built ahead of time on screen (its plots painted: window.lab.timings.firstPlot),
  and below the table where that time goes: BokehJS and Panel have run, the document is decoded,
  the views of the page's top are built, then the whole page (the parts set aside have joined);
- cpu: the page's main-thread CPU time until then (CDP Performance ThreadTime), steadier than the
  clock on a shared machine: compare it between builds when the plot times are noisy;
- step: the first working step: Step is pressed (in the page, the moment it is enabled) and the
  time is taken once the frame after it has been painted;
- pyodide / wheels / live: window.lab.timings, ms from navigation start; live is when the
  settings respond (Python has taken over);
- each against the floor, a bare page from the same dist/site that only starts Pyodide and
  imports numpy (written to dist/site/bench-floor.html for the run, deleted afterwards).

Goals (issue 9): first plot and first working step within 0.5x the floor on every page; live
(settings respond) no worse than before. Timings are printed, never asserted.

--breakdown also prints, per page, when the page's Python worker reached each step of its start
(the snapshot's two downloads, Python restored, or Pyodide up in the normal start) and what
making the live page took there (the page object, its document, its JSON when it is not
adopted), as the worker reports them (window.lab.timings.worker and .python).

--alone also loads, per page, a bare page that starts that page's worker with nothing else: no
BokehJS, no first paint (bench-alone-<slug>.html, written for the run and deleted). Its live is
the least the page's could be on this machine; its "all cpu" is what the worker's path costs,
so the page's row minus it is what drawing the page costs the start.

The floor is a bare worker of the same site that starts Pyodide and imports numpy (the pages
run their Python in a worker too), fetching the runtime's packed files as the pages do
(assets/py-fetch.js).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "dist" / "site"
sys.path.insert(0, str(ROOT))

from bench import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    browser_cpu_s,
    settle,
)
from sitebuild.runtime import packed_sizes  # noqa: E402

FLOOR_NAME = "bench-floor.html"
FLOOR_SCRIPT = "bench-floor.js"  # a file, as the site's policy allows no inline script
FLOOR_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>bench floor: Pyodide + numpy</title></head>
<body><p>Floor: a bare worker starts Pyodide and imports numpy</p>
<script src="bench-floor.js"></script>
</body></html>
"""
# The pages run Python in a worker: so does the floor (a worker made from a Blob would need
# the policy's blob:, so it is a file too).
FLOOR_JS = """
"use strict";
window.lab = { timings: { start: performance.now() }, state: { live: false, failed: null } };
const worker = new Worker("bench-floor-worker.js");
worker.onmessage = (e) => {
  if (e.data.failed) { window.lab.state.failed = e.data.failed; return; }
  window.lab.timings[e.data.at] = e.data.time - performance.timeOrigin;
  if (e.data.at === "live") window.lab.state.live = true;
};
"""
FLOOR_WORKER = "bench-floor-worker.js"
FLOOR_WORKER_JS = """
"use strict";
const at = (name) => postMessage({ at: name, time: performance.timeOrigin + performance.now() });
// the site ships the standard library as zstd frames: decoded as the pages' worker does
importScripts("assets/py-fetch.js", "assets/zstd.js", "pyodide/pyodide.js");
self.fetch = labFetch.unzipping(self.fetch.bind(self), () => (__PACKED__), () => {}, self.labZstd.decompress);
(async () => {
  const pyodide = await loadPyodide({ indexURL: new URL("pyodide/", location.href).href });
  at("pyodide");
  await pyodide.loadPackage(["numpy"], { messageCallback: () => {} });
  at("packages");
  pyodide.runPython("import numpy");
  at("live");
})().catch((e) => postMessage({ failed: String(e) }));
"""

# --alone: a page's worker with no page around it. A bare page of the same site holds the page's
# own config (lab-config, copied from the built page) and the ids of its document built ahead of
# time, starts the worker with the shell's own module (assets/js/worker-start.js) and tells it
# the page is on screen at once; "live" is the worker's "render" (what the page takes over
# from). Nothing else runs: no BokehJS, no first paint. The least a page's live could be here.
ALONE_SCRIPT = "bench-alone.js"
ALONE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>bench: __SLUG__'s worker alone</title></head>
<body><p>__SLUG__'s Python worker alone: no BokehJS, no page drawn</p>
<script id="lab-config" type="application/json">__CONFIG__</script>
<script id="bench-ids" type="application/json">__IDS__</script>
<script type="module" src="bench-alone.js"></script>
</body></html>
"""
ALONE_JS = """
import { contract, pageConfig } from "./assets/js/config.js";
import { listen, startWorker } from "./assets/js/worker-start.js";
const lab = window.lab = { timings: { start: performance.now() }, state: { live: false, failed: null } };
const names = contract().worker;
const ids = JSON.parse(document.getElementById("bench-ids").textContent);
const worker = startWorker();
worker.postMessage({ type: names.page, page: { search: "", ids, defaults: pageConfig().link.defaults, t: 0 } });
listen(({ data: m }) => {
  if (m.type === names.progress && m.marks) {
    lab.timings.worker = Object.fromEntries(Object.entries(m.marks).map(([k, v]) => [k, v - performance.timeOrigin]));
  } else if (m.type === names.failed) {
    lab.state.failed = `${m.kind}: ${m.detail}`;
  } else if (m.type === names.render) {
    lab.timings.python = m.timings;
    lab.timings.live = performance.now();
    lab.state.live = true;
  }
});
"""


def alone_page(page_html: str, slug: str) -> str:
    """The bare page of --alone for a built page: its lab-config and the ids of its document
    built ahead of time (every model id in lab-doc), as the shell's pageInfo() sends them."""
    config = re.search(r'<script id="lab-config" type="application/json">(.*?)</script>', page_html, re.S)
    doc = re.search(r'<script id="lab-doc" type="application/json">(.*?)</script>', page_html, re.S)
    if not config or not doc:
        raise ValueError(f"{slug}.html has no lab-config or lab-doc block: is it a page of the built site?")
    ids = sorted(set(re.findall(r'"id": ?"([^"]+)"', doc.group(1))))
    return (ALONE_PAGE.replace("__SLUG__", slug).replace("__CONFIG__", config.group(1))
            .replace("__IDS__", json.dumps(ids)))


# The breakdown of going live, from what the page's worker reports (assets/py-worker.js and
# ui/worker.py: window.lab.timings.worker, .python); nothing is slipped into the page.
WORKER_STEPS = (("worker", "the worker's script runs"), ("heap", "snapshot: heap downloaded, unzipped"),
                ("bundle", "snapshot: packages downloaded, unzipped"),
                ("compiled", "the runtime's wasm compiled (early, as it downloads)"), ("restored", "snapshot: Python restored"),
                ("runtime", "normal start: Pyodide up"), ("python", "Python ready for the page"))

# Presses Step the moment it is enabled and notes when the frame after it has been painted.
FIRST_STEP = """
(() => {
  const poll = () => {
    const button = document.getElementById("tp-step");
    if (button && !button.disabled && window.lab && window.lab.player && window.lab.timings) {
      button.click();
      requestAnimationFrame(() => requestAnimationFrame(() => {
        window.lab.timings.firstStep = performance.now();
        window.lab.timings.firstStepT = window.lab.player.t;
      }));
      return;
    }
    requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
})();
"""

def chromium_launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


_gzip_cache: dict[Path, int] = {}


def gzip_size(path: Path) -> int:
    if path not in _gzip_cache:
        _gzip_cache[path] = len(gzip.compress(path.read_bytes(), 6)) if path.is_file() else 0
    return _gzip_cache[path]


def load_once(browser, url: str, base: str, *, timeout_ms: int) -> dict:
    """One cold load; returns bytes, paint and window.lab.timings (ms), or {'error': ...}."""
    context = browser.new_context(service_workers="block")
    try:
        page = context.new_page()
        settle()  # the new window's own toolbar built first (bench/__init__.py)
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text[:300]) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"[:300]))
        page.add_init_script(FIRST_STEP)
        cdp = context.new_cdp_session(page)
        # Every file the page and its worker fetched (the context sees the worker's requests;
        # CDP's Network domain of the page does not), counted by what the site holds.
        fetched: list[str] = []
        context.on("requestfinished", lambda r: fetched.append(r.url))
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        cdp.send("Performance.enable")
        cpu_start = browser_cpu_s()
        page.goto(url, wait_until="commit")
        # The main thread's CPU time up to the first plot: steadier than the clock when other
        # work shares the machine (it counts this page's work, not the time it waited for a core).
        page.wait_for_function("(window.lab?.timings && window.lab?.timings.firstPlot) || window.lab?.state.live === true"
                               " || !!window.lab?.state.failed", timeout=timeout_ms, polling=50)
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        cpu_plot = metrics.get("ThreadTime", 0) * 1000 if page.evaluate("!window.lab.state.live") else None
        page.wait_for_function("window.lab?.state.live === true || !!window.lab?.state.failed", timeout=timeout_ms,
                               polling=50)
        cpu_end = browser_cpu_s()
        cpu_live = None if cpu_start is None or cpu_end is None else (cpu_end - cpu_start) * 1000
        # the parts set aside at first paint join once the page is live (assets/js/later.js)
        page.wait_for_function("!window.lab.timings.firstPlot || !!window.lab.timings.joined || !!window.lab.state.failed",
                               timeout=timeout_ms, polling=50)  # (the floor has no page)
        result = page.evaluate("""() => ({
            failed: window.lab.state.failed || null,
            timings: window.lab.timings,
            paint: Object.fromEntries(performance.getEntriesByType('paint').map(e => [e.name, e.startTime])),
        })""")
        page.wait_for_timeout(200)  # let the last loadingFinished events arrive
        cdp.detach()
        paths = [SITE / u[len(base):].split("?")[0] for u in fetched if u.startswith(base)]
        paths = [p for p in paths if p.is_file()]
        result.update(bytes=sum(p.stat().st_size for p in paths), gzip=sum(gzip_size(p) for p in paths),
                      errors=errors, cpu_plot=cpu_plot, cpu_live=cpu_live)
        return result
    finally:
        context.close()


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt_s(ms) -> str:
    return "   -  " if ms is None else f"{ms / 1000:6.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="cold loads per page (default 3)")
    parser.add_argument("--pages", default="", help="comma-separated slugs (default: all pages)")
    parser.add_argument("--breakdown", action="store_true",
                        help="also time imports, page construction and first render inside the page")
    parser.add_argument("--timeout", type=float, default=180, help="seconds per load before giving up")
    parser.add_argument("--site", type=Path, default=None, help="the built site (default dist/site)")
    parser.add_argument("--alone", action="store_true",
                        help="also start each page's worker alone, in a bare page with no BokehJS "
                             "and nothing drawn: the least its live could be on this machine")
    args = parser.parse_args()
    global SITE
    SITE = (args.site or SITE).resolve()

    if not (SITE / "index.html").exists():
        sys.exit(f"error: {SITE}/index.html is missing: build the site first "
                 "(`make build` or `.venv/bin/python build.py`)")
    if not Path(CHROMIUM).exists():
        sys.exit(f"error: {CHROMIUM} is missing (Debian: apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    from serve import make_server
    from ui.pages import PAGES

    pages = [p for p in PAGES if not args.pages or p.slug in args.pages.split(",")]
    pages = [p for p in pages if (SITE / f"{p.slug}.html").exists()]
    if not pages:
        sys.exit("error: no page of ui.pages.PAGES is in dist/site")

    floor_file = SITE / FLOOR_NAME
    floor_file.write_text(FLOOR_PAGE)
    (SITE / FLOOR_SCRIPT).write_text(FLOOR_JS)
    (SITE / FLOOR_WORKER).write_text(FLOOR_WORKER_JS.replace("__PACKED__", json.dumps(packed_sizes(SITE))))
    alone = [SITE / f"bench-alone-{p.slug}.html" for p in pages] if args.alone else []
    if alone:
        (SITE / ALONE_SCRIPT).write_text(ALONE_JS)
        for p, file in zip(pages, alone):
            file.write_text(alone_page((SITE / f"{p.slug}.html").read_text(), p.slug))
    server = make_server(SITE, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    targets = [("floor (Pyodide + numpy)", FLOOR_NAME, None)]
    targets += [(p.slug, f"{p.slug}.html", "page") for p in pages]
    targets += [(f"{p.slug}: worker alone", file.name, "alone") for p, file in zip(pages, alone)]
    results: dict[str, list[dict]] = {name: [] for name, _, _ in targets}
    try:
        with sync_playwright() as pw:
            browser = chromium_launch(pw)
            try:
                for run in range(args.runs):  # interleaved, so drifting load hits all alike
                    for name, file, _ in targets:
                        r = load_once(browser, base + file, base, timeout_ms=int(args.timeout * 1000))
                        results[name].append(r)
                        t = r["timings"] or {}
                        state = f"FAILED: {r['failed']}" if r["failed"] else f"live {t.get('live', 0) / 1000:.2f} s"
                        print(f"  run {run + 1}/{args.runs} {name:24s} {state}"
                              f"{'  console errors: ' + str(len(r['errors'])) if r['errors'] else ''}",
                              file=sys.stderr, flush=True)
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
        floor_file.unlink(missing_ok=True)
        (SITE / FLOOR_SCRIPT).unlink(missing_ok=True)
        (SITE / FLOOR_WORKER).unlink(missing_ok=True)
        for file in [*alone, SITE / ALONE_SCRIPT] if alone else []:
            file.unlink(missing_ok=True)

    report(targets, results, args.runs, args.breakdown)


def report(targets, results, runs: int, breakdown: bool = False) -> None:
    floor_name = targets[0][0]

    def summary(rs):
        ok = [r for r in rs if not r["failed"]]
        paint = [r["paint"].get("first-contentful-paint", r["paint"].get("first-paint")) for r in ok]
        return {
            "ok": len(ok), "bytes": median([r["bytes"] for r in ok]), "gzip": median([r["gzip"] for r in ok]),
            "paint": median(paint), "pyodide": median([r["timings"].get("pyodide") for r in ok]),
            "plot": median([r["timings"].get("firstPlot") for r in ok]),
            "cpu": median([r["cpu_plot"] for r in ok if r["timings"].get("firstPlot")]),
            "step": median([r["timings"].get("firstStep") for r in ok if r["timings"].get("firstStepT") == 1]),
            "packages": median([r["timings"].get("packages") for r in ok]),
            "live": median([r["timings"].get("live") for r in ok]),
            "cpu_live": median([r.get("cpu_live") for r in ok]),
            "errors": sorted({e for r in rs for e in r["errors"]}),
            "failed": sorted({r["failed"] for r in rs if r["failed"]}),
        }

    stats = {name: summary(results[name]) for name, _, _ in targets}
    floor_live = stats[floor_name]["live"]
    print(f"\nCold start, median of {runs} run(s); seconds from navigation start; "
          "MB as served (uncompressed) / gzipped; x = against the floor's live;"
          "\ncpu: the page's main thread to the first plot; all cpu: every process of the browser, "
          "navigation to live")
    header = (f"{'page':26s} {'MB':>6s} {'gz MB':>6s} {'paint':>6s} {'plot':>6s} {'x':>5s} {'cpu':>5s} "
              f"{'step':>6s} {'x':>5s} {'pyodide':>7s} {'wheels':>6s} {'live':>6s} {'x':>5s} {'all cpu':>7s}")
    print(header)
    print("-" * len(header))

    def x(ms) -> str:
        return f"{ms / floor_live:5.2f}" if ms and floor_live else "    -"

    for name, _, _ in targets:
        s = stats[name]
        mb = f"{s['bytes'] / 1e6:6.1f}" if s["bytes"] else "     -"
        gz = f"{s['gzip'] / 1e6:6.1f}" if s["gzip"] else "     -"
        cpu = f"{s['cpu'] / 1000:5.2f}" if s["cpu"] else "    -"
        print(f"{name:26s} {mb} {gz} {fmt_s(s['paint'])} {fmt_s(s['plot'])} {x(s['plot'])} {cpu} "
              f"{fmt_s(s['step'])} {x(s['step'])} {fmt_s(s['pyodide']):>7s} "
              f"{fmt_s(s['packages'])} {fmt_s(s['live'])} {x(s['live'])} {fmt_s(s['cpu_live']):>7s}"
              f"{'' if s['ok'] == runs else '  (' + str(runs - s['ok']) + ' failed)'}")
    for name, _, _ in targets:
        for e in stats[name]["failed"]:
            print(f"  {name}: failed: {e}")
        for e in stats[name]["errors"][:5]:
            print(f"  {name}: console error: {e}")
    if floor_live:
        worst = max(((stats[n]["plot"] or 1e12, stats[n]["step"] or 1e12) for n, _, kind in targets if kind == "page"),
                    default=None, key=max)
        if worst:
            ratio = max(worst) / floor_live
            print(f"\nGoal: first plot and first working step within 0.5x the floor on every page: "
                  f"worst {ratio:.2f}x -> {'met' if ratio <= 0.5 else 'NOT met'}")

    print("\nThe first plot, step by step (ms from navigation start, median): BokehJS and Panel have run,"
          "\nthe document is decoded, the views of the page's top are built, its plots are painted; then the"
          "\nparts set aside have joined (the whole page built; on the whole page, once it is live)")
    print(f"  {'page':24s} {'scripts':>8s} {'decoded':>8s} {'built':>8s} {'plot':>8s} {'whole':>8s}")
    for name, _, kind in targets:
        if kind != "page":
            continue
        ok = [r for r in results[name] if not r["failed"]]
        cells = [median([r["timings"].get(k) for r in ok]) for k in ("scripts", "decoded", "built", "firstPlot", "joined")]
        print(f"  {name:24s} " + " ".join("       -" if c is None else f"{c:8.0f}" for c in cells))

    if breakdown:
        print_breakdown(targets, results)


def print_breakdown(targets, results) -> None:
    """Going live step by step, as the page's worker reports it (ms from navigation start,
    median), then what making the live page took in the worker (ms)."""
    print("\nGoing live, step by step (ms from navigation start, median; from the page's worker)")
    for name, _, kind in targets:
        ok = [r for r in results[name] if not r["failed"] and r["timings"].get("worker")]
        if kind is None or not ok:  # the floor
            continue
        snap = sum(1 for r in ok if r["timings"].get("snapshot") or "restored" in r["timings"]["worker"])
        print(f"  {name}: from the snapshot in {snap} of {len(ok)} run(s)")
        for key, what in WORKER_STEPS:
            value = median([r["timings"]["worker"].get(key) for r in ok])
            if value is not None:
                print(f"    {what:46s} {value:7.0f}")
        steps = [r["timings"].get("python") or {} for r in ok]
        for key in dict.fromkeys(k for st in steps for k in st):
            print(f"    {'in the worker: ' + key:46s} {median([st.get(key) for st in steps]):7.0f} ms")
        print(f"    {'live (the settings respond)':46s} {median([r['timings'].get('live') for r in ok]):7.0f}")


if __name__ == "__main__":
    main()
