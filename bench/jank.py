"""The main thread of every page of the built site, cold in headless Chromium: long tasks while
Python starts and after a setting changes, with Step pressed throughout.

    .venv/bin/python bench/jank.py [--runs 3] [--pages running-sum,gates] [--site DIR] [--why]

--why lists each page's long tasks of the boot window (its first run) with what ran in them:
the long animation frame each fell in, its longest script's invoker and the layout it forced.

Serves the built site (default dist/site) on a free port (serve.py, in a thread) and loads each
page cold, as bench/boot.py does: a fresh browser context per load, the HTTP cache disabled,
service workers blocked. Per load, two windows:

1. Boot: from the first plot painted (the shell's timings.firstPlot) until the page is live
   (timings.live, the `lab-live` body class). Step is pressed every 250 ms from the moment the
   button is on the page, as a user would: real mouse clicks at its centre sent through CDP
   without waiting for the page, so that a busy main thread queues them (each carries the time
   it was made; the ones made inside the window count).
2. A setting: once the page is live and quiet, the first slider of the settings (its noUiSlider
   handle, focused) gets one → key press (← if it is at its end), and Step is pressed every 100 ms
   until the new run is painted. A new run is the player's frames replaced (the frames source or
   its data is a new object, or tMax changed) or `player.refresh()` called; painted is the first
   animation frame after that, plus a zero timeout.

Measured in the page (an init script, so from the document's start):
- long tasks: PerformanceObserver 'longtask' (buffered). A task counts in a window when it ends
  after the window's start and begins before its end; its part before the start is cut off, its
  end is not (the task in which the page goes live blocks whoever pressed meanwhile to its end);
- TBT, total blocking time: the sum over those tasks of (duration − 50 ms);
- steps painted: animation frames whose t differs from the frame before, each answering at least
  one press made inside the window (presses queued behind one task and answered in one frame
  count once: the picture moved once); beside it the presses made, and the slowest press to its
  painted frame;
- frame gaps: the longest interval between two animation frames, a cross-check of the long tasks
  (a gap is a task or a run of them that kept the page from painting).
At the run's last t a press starts it over (t = 0, then the step), so every press can move t.

Goals (issue 19), printed as met / not met, never asserted: from the first plot until live no long
task over 200 ms and TBT ≤ 300 ms; after a setting change no long task over 200 ms, and steps keep
painting (here: at least 90% of the presses made while the new run is computed paint a step of
their own). Medians over --runs loads of each page; a count is a median too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "dist" / "site"
sys.path.insert(0, str(ROOT))

from bench import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

VIEWPORT = {"width": 1400, "height": 1000}  # a laptop's view, as bench/frames.py
BOOT_PRESS_MS = 250  # issue 19: Step pressed every 250 ms from the first plot until live
CHANGE_PRESS_MS = 100  # while the new run is computed
LONG_TASK_MS = 50  # what the browser reports as a long task; TBT counts the excess over it
GOAL_LONGEST_MS = 200  # issue 19: no long task over 200 ms
GOAL_TBT_MS = 300  # issue 19: total blocking time at most 300 ms, first plot to live
GOAL_PAINTED_SHARE = 0.9  # "steps keep painting": this share of the presses paint a step
QUIET_MS = 1000  # after live: this long without a long task before the setting is changed
QUIET_LIMIT_MS = 15_000  # ... or at most this long
NEW_RUN_TIMEOUT_MS = 90_000  # a setting's new run computed on two busy cores

# In the page from its first script on. Reads the shell through one accessor (`get`): the
# window.lab object (lab.timings, lab.player, lab.state.live / .failed) and the `lab-live` body
# class.
MONITOR_JS = r"""
(() => {
  const lab = () => window.lab || {};
  const state = () => lab().state || {};
  const get = {
    player: () => lab().player || null,
    timings: () => lab().timings || null,
    live: () => state().live === true || Boolean(document.body && document.body.classList.contains("lab-live")),
    failed: () => state().failed || null,
    step: () => document.getElementById("tp-step")
      || [...document.querySelectorAll("button")].find((b) => b.textContent.trim() === "Step") || null,
  };
  const m = (window.__jank = {
    get, tasks: [], gaps: [], steps: [], presses: [], pending: [], refreshes: 0, watch: null,
    boxes: [], boxKey: null, changeAt: null, runSeen: null, runPainted: null, armed: false, longtask: true,
  });
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) m.tasks.push([e.startTime, e.duration]);
    }).observe({ type: "longtask", buffered: true });
  } catch (err) { m.longtask = String(err); }
  m.frames = [];  // long animation frames: what ran in them (--why)
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const top = [...e.scripts].sort((x, y) => y.duration - x.duration)[0];
        m.frames.push([e.startTime, e.duration, top ? `${top.invoker} ${top.sourceFunctionName || ""}`.trim() : "rendering",
          top ? top.duration : 0, e.scripts.reduce((n, x) => n + x.forcedStyleAndLayoutDuration, 0)]);
      }
    }).observe({ type: "long-animation-frame", buffered: true });
  } catch (err) { /* an older browser: --why says so */ }

  const runId = (p) => {
    const f = p && p.frames;
    return { frames: f || null, data: (f && f.data) || null, tMax: p ? p.tMax : null, refreshes: m.refreshes };
  };
  const wrapRefresh = (p) => {  // a new run also shows as a refresh() call (Python's after_apply)
    if (!p || p.__jankWrapped || typeof p.refresh !== "function") return;
    const refresh = p.refresh;
    p.refresh = function (...args) { m.refreshes++; return refresh.apply(this, args); };
    p.__jankWrapped = true;
  };
  m.arm = () => {
    const p = get.player();
    wrapRefresh(p);
    m.watch = runId(p);
    m.changeAt = m.runSeen = m.runPainted = null;
    m.armed = true;
  };
  let lastT = null, lastFrame = null;
  const frame = () => {
    const now = performance.now();
    if (lastFrame !== null && now - lastFrame > 50) m.gaps.push([lastFrame, now - lastFrame]);
    lastFrame = now;
    const p = get.player();
    const t = p ? p.t : null;
    if (t !== null && lastT !== null && t !== lastT) {
      m.steps.push([now, t, m.pending]);
      m.pending = [];
    }
    lastT = t;
    const b = get.step();
    if (b) {
      const r = b.getBoundingClientRect(), key = `${Math.round(r.left + r.width / 2)},${Math.round(r.top + r.height / 2)}`;
      if (key !== m.boxKey) { m.boxKey = key; m.boxes.push([now, key]); }
    }
    if (m.watch && m.changeAt !== null && m.runSeen === null) {
      const id = runId(p), w = m.watch;
      if (id.frames !== w.frames || id.data !== w.data || id.tMax !== w.tMax || id.refreshes !== w.refreshes) {
        m.runSeen = now;
        setTimeout(() => { m.runPainted = performance.now(); }, 0);
      }
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  document.addEventListener("click", (e) => {
    const step = get.step();
    if (!step || !(e.target === step || step.contains(e.target))) return;
    m.presses.push(e.timeStamp);
    m.pending.push(e.timeStamp);
    const p = get.player();
    if (p && !step.disabled && p.t >= p.tMax) p.seek(0);  // start over, so the press moves t
  }, true);
  m.missed = [];  // presses that landed elsewhere: [time, x, y, what was there]
  document.addEventListener("mousedown", (e) => {
    const step = get.step(), el = e.target;
    if (step && (el === step || step.contains(el))) return;
    const what = el && el.tagName ? `${el.tagName.toLowerCase()}${el.id ? "#" + el.id : ""}${step && step.disabled ? " (Step disabled)" : ""}` : String(el);
    m.missed.push([e.timeStamp, e.clientX, e.clientY, what]);
  }, true);
  document.addEventListener("keydown", (e) => {
    if (m.armed) { m.changeAt = e.timeStamp; m.armed = false; }
  }, true);
})();
"""

STEP_BOX_JS = """() => { const b = window.__jank.get.step(); if (!b) return null;
  const r = b.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; }"""
START_JS = """() => { const m = window.__jank; const b = m && m.get.step(); if (!b) return false;
  const r = b.getBoundingClientRect(); if (!r.width) return false;
  return {origin: performance.timeOrigin, box: {x: r.left + r.width / 2, y: r.top + r.height / 2}}; }"""
LIVE_JS = "() => { const g = window.__jank.get; return g.live() || !!g.failed(); }"
COLLECT_JS = """() => { const m = window.__jank, g = m.get, t = g.timings() || {};
  return {failed: g.failed() ? String(g.failed()) : null, timings: {firstPlot: t.firstPlot, live: t.live},
    tasks: m.tasks, frames: m.frames, gaps: m.gaps, missed: m.missed, boxes: m.boxes, steps: m.steps, presses: m.presses, longtask: m.longtask,
    changeAt: m.changeAt, runSeen: m.runSeen, runPainted: m.runPainted, now: performance.now()}; }"""
QUIET_JS = """([quiet, limit]) => new Promise((resolve) => {
  const m = window.__jank, start = performance.now();
  const check = () => {
    const last = m.tasks.reduce((a, [s, d]) => Math.max(a, s + d), 0);
    const now = performance.now();
    if (now - Math.max(last, start) >= quiet || now - start >= limit) resolve(now - start);
    else setTimeout(check, 100);
  };
  check();
})"""


# ---- pure helpers (tests/site_build/test_bench_jank.py) ---------------------------------------

def median(values: Iterable[float | None]) -> float | None:
    """The median of the values that are not None; None when there are none."""
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def total_blocking_ms(durations: Iterable[float]) -> float:
    """Σ over tasks of the part of each beyond 50 ms (the total blocking time)."""
    return sum(max(0.0, d - LONG_TASK_MS) for d in durations)


def tasks_in_window(tasks: Iterable[Sequence[float]], start: float, end: float) -> list[float]:
    """The durations of the (start, duration) tasks that end after `start` and begin before
    `end`, each without its part before `start` (its end is kept: a task that began before the
    window closed blocked it until it ended)."""
    return [s + d - max(s, start) for s, d in tasks if s + d > start and s < end]


def steps_painted(steps: Iterable[Sequence], start: float, end: float) -> int:
    """Frames that painted a new t answering at least one press made in [start, end]; `steps`
    are (frame time, t, [press times answered])."""
    return sum(1 for _, _, presses in steps if any(start <= p <= end for p in presses))


def slowest_press_ms(steps: Iterable[Sequence], start: float, end: float) -> float | None:
    """The longest wait from a press made in [start, end] to the frame that painted its step."""
    waits = [when - p for when, _, presses in steps for p in presses if start <= p <= end]
    return max(waits) if waits else None


def window_figures(r: dict, start: float | None, end: float | None) -> dict:
    """Long tasks, TBT, frame gaps and steps of one load between two of its times (page ms)."""
    if start is None or end is None:
        return {}
    tasks = tasks_in_window(r["tasks"], start, end)
    gaps = tasks_in_window(r["gaps"], start, end)
    sent = [p for p in r["sent"] if start <= p <= end]
    landed = [p for p in r["presses"] if start <= p <= end]
    return {
        "over_200": sum(1 for d in tasks if d > GOAL_LONGEST_MS),
        "longest": max(tasks, default=0.0),
        "tbt": total_blocking_ms(tasks),
        "gap": max(gaps, default=0.0),
        "painted": steps_painted(r["steps"], start, end),
        "pressed": len(sent),
        "missed": len(sent) - len(landed),
        "slowest": slowest_press_ms(r["steps"], start, end),
    }


def verdict(met: bool | None) -> str:
    return "-" if met is None else ("met" if met else "not met")


# ---- the browser ------------------------------------------------------------------------------

class Presser:
    """Presses Step every `interval_ms` with real mouse clicks through CDP, sent without
    waiting for the page (a busy main thread queues them, as it queues a user's)."""

    def __init__(self, page, cdp, box: dict):
        self.page, self.cdp, self.box = page, cdp, box
        self.sent: list[float] = []  # epoch seconds
        self.inflight: list = []
        self._box_task = None

    def press(self) -> None:
        when = time.time()
        for kind in ("mousePressed", "mouseReleased"):
            self.inflight.append(asyncio.ensure_future(self.cdp.send("Input.dispatchMouseEvent", {
                "type": kind, "x": self.box["x"], "y": self.box["y"], "button": "left",
                "clickCount": 1, "timestamp": when})))
        self.sent.append(when)
        # The Step button may move as the page lays out: read its place again, without waiting.
        if self._box_task is None or self._box_task.done():
            if self._box_task is not None and not self._box_task.exception() and self._box_task.result():
                self.box = self._box_task.result()
            self._box_task = asyncio.ensure_future(self.page.evaluate(STEP_BOX_JS))

    async def every(self, interval_ms: float, until: asyncio.Future) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        k = 0
        while not until.done():
            self.press()
            k += 1
            delay = start + k * interval_ms / 1000 - loop.time()
            if delay > 0:
                await asyncio.wait([until], timeout=delay)

    async def settle(self) -> None:
        for task in [*self.inflight, self._box_task]:
            if task is not None:
                try:
                    await task
                except Exception:  # noqa: BLE001 - a click sent to a closing page
                    pass
        self.inflight = []


async def load_once(browser, url: str, *, timeout_ms: int, reduced_motion: bool = False) -> dict:
    """One cold load: the boot window, then one setting changed. Returns what the page
    recorded (page ms), or {'error': ...}. With ``reduced_motion`` the page is told to reduce
    motion, so a step jumps instead of easing."""
    context = await browser.new_context(service_workers="block", viewport=VIEWPORT,
                                        reduced_motion="reduce" if reduced_motion else "no-preference")
    try:
        page = await context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text[:300]) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"[:300]))
        await page.add_init_script(MONITOR_JS)
        cdp = await context.new_cdp_session(page)
        await cdp.send("Network.enable")
        await cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        await page.goto(url, wait_until="commit")
        # Step is pressed from the moment it is on the page (a press made before the first plot
        # lands on a disabled button, or is left out of the window): the first plot is known
        # only once the page has time to say so, which is after the tasks that follow it.
        start = await (await page.wait_for_function(START_JS, timeout=timeout_ms, polling=20)).json_value()
        origin = start["origin"]

        # 1. From the first plot until live, Step every 250 ms.
        live = asyncio.ensure_future(page.wait_for_function(LIVE_JS, timeout=timeout_ms, polling=50))
        boot = Presser(page, cdp, start["box"])
        await boot.every(BOOT_PRESS_MS, live)
        await live
        await boot.settle()
        await page.evaluate(QUIET_JS, [QUIET_MS, QUIET_LIMIT_MS])
        booted = await page.evaluate(COLLECT_JS)
        if booted["failed"]:
            return {"error": f"failed to start: {booted['failed']}", "errors": errors}
        box = boot.box

        # 2. One slider key press on a setting, Step every 100 ms until the new run is painted.
        handle = page.locator("#lab-app .noUi-handle").first
        if await handle.count() == 0:
            return {**booted, "sent": [w * 1000 - origin for w in boot.sent],
                    "errors": errors + ["no slider in the settings"]}
        key = await handle.evaluate("""(h) => { h.focus({preventScroll: true});
            const now = Number(h.getAttribute("aria-valuenow")), max = Number(h.getAttribute("aria-valuemax"));
            return now >= max ? "ArrowLeft" : "ArrowRight"; }""")
        box = await page.evaluate(STEP_BOX_JS) or box
        await page.evaluate("window.__jank.arm()")
        when = time.time()
        keys = [asyncio.ensure_future(cdp.send("Input.dispatchKeyEvent", {
            "type": kind, "key": key, "code": key, "windowsVirtualKeyCode": 37 if key == "ArrowLeft" else 39,
            "timestamp": when})) for kind in ("rawKeyDown", "keyUp")]
        painted = asyncio.ensure_future(page.wait_for_function(
            "() => window.__jank.runPainted !== null", timeout=NEW_RUN_TIMEOUT_MS, polling=50))
        await asyncio.sleep(CHANGE_PRESS_MS / 1000)
        change = Presser(page, cdp, box)
        await change.every(CHANGE_PRESS_MS, painted)
        try:
            await painted
        except Exception:  # noqa: BLE001 - no new run: reported as such
            pass
        await asyncio.gather(*keys, return_exceptions=True)
        await change.settle()
        await page.wait_for_timeout(300)  # presses queued behind the last task get their frame
        result = await page.evaluate(COLLECT_JS)
        result.update(key=key, errors=errors, sent=[w * 1000 - origin for w in boot.sent + change.sent])
        return result
    finally:
        await context.close()


def figures(r: dict) -> dict:
    """The two windows' figures of one load."""
    t = r["timings"]
    out = {"plot": t.get("firstPlot"), "live": t.get("live"),
           "boot": window_figures(r, t.get("firstPlot"), t.get("live"))}
    end = r.get("runPainted")
    out["change"] = window_figures(r, r.get("changeAt"), end) if end is not None else {}
    out["new_run"] = end - r["changeAt"] if end is not None and r.get("changeAt") is not None else None
    out["no_new_run"] = r.get("changeAt") is not None and end is None
    return out


async def measure(site: Path, pages, runs: int, timeout_ms: int, reduced_motion: bool = False) -> dict[str, list[dict]]:
    from playwright.async_api import async_playwright  # noqa: PLC0415

    from serve import make_server  # noqa: PLC0415

    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    results: dict[str, list[dict]] = {p.slug: [] for p in pages}
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for run in range(runs):  # interleaved, so drifting load hits all pages alike
                    for p in pages:
                        try:
                            r = await load_once(browser, f"{base}{p.slug}.html", timeout_ms=timeout_ms,
                                               reduced_motion=reduced_motion)
                        except Exception as err:  # noqa: BLE001 - one load's failure is reported, not fatal
                            r = {"error": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}", "errors": []}
                        results[p.slug].append(r)
                        if r.get("error"):
                            state = f"FAILED: {r['error']}"
                        else:
                            f = figures(r)
                            state = (f"live {f['live'] / 1000:.2f} s, boot TBT {f['boot'].get('tbt', 0):.0f} ms, "
                                     + (f"new run {f['new_run']:.0f} ms" if f["new_run"] is not None else "no new run"))
                        print(f"  run {run + 1}/{runs} {p.slug:16s} {state}"
                              f"{'  console errors: ' + str(len(r['errors'])) if r.get('errors') else ''}",
                              file=sys.stderr, flush=True)
            finally:
                await browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return results


# ---- the report -------------------------------------------------------------------------------

def summary(rs: list[dict]) -> dict:
    ok = [figures(r) for r in rs if not r.get("error")]

    def med(part: str | None, key: str):
        return median([(f[part] if part else f).get(key) for f in ok])

    s = {"ok": len(ok), "plot": med(None, "plot"), "live": med(None, "live"), "new_run": med(None, "new_run"),
         "no_new_run": sum(f["no_new_run"] for f in ok),
         "missed": median([sum(f[part].get("missed", 0) for part in ("boot", "change")) for f in ok])}
    for part in ("boot", "change"):
        s[part] = {k: med(part, k) for k in ("over_200", "longest", "tbt", "gap", "painted", "pressed", "slowest")}
    return s


def goals(s: dict) -> dict[str, bool | None]:
    b, c = s["boot"], s["change"]
    keep = None if not c["pressed"] else c["painted"] >= GOAL_PAINTED_SHARE * c["pressed"]
    return {
        "boot: no task > 200 ms": None if b["longest"] is None else b["longest"] <= GOAL_LONGEST_MS,
        "boot: TBT ≤ 300 ms": None if b["tbt"] is None else b["tbt"] <= GOAL_TBT_MS,
        "change: no task > 200 ms": None if c["longest"] is None else c["longest"] <= GOAL_LONGEST_MS,
        "change: steps keep painting": keep,
    }


def cell(value, width: int, scale: float = 1.0, digits: int = 0) -> str:
    return f"{'-':>{width}s}" if value is None else f"{value / scale:{width}.{digits}f}"


def report(results: dict[str, list[dict]], runs: int) -> None:
    stats = {slug: summary(rs) for slug, rs in results.items()}
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    print(f"\nThe main thread, cold, median of {runs} run(s). Boot: from the first plot until live, Step "
          f"every {BOOT_PRESS_MS} ms. Change: one slider key press until the new run is painted, "
          f"Step every {CHANGE_PRESS_MS} ms.\nLoad average now (1 / 5 / 15 min): {load} on "
          f"{os.cpu_count()} cores: long tasks stretch when other work shares them.")
    head1 = (f"{'':16s} {'':>5s} {'':>5s} | {'boot':<40s} | {'after a setting change':<34s}")
    head2 = (f"{'page':16s} {'plot':>5s} {'live':>5s} | {'>200':>4s} {'longest':>7s} {'TBT':>6s} "
             f"{'painted':>8s} {'slowest':>7s} {'gap':>5s} | {'>200':>4s} {'longest':>7s} {'TBT':>6s} "
             f"{'painted':>8s} {'new run':>7s}")
    head3 = (f"{'':16s} {'s':>5s} {'s':>5s} | {'':>4s} {'ms':>7s} {'ms':>6s} {'/pressed':>8s} "
             f"{'ms':>7s} {'ms':>5s} | {'':>4s} {'ms':>7s} {'ms':>6s} {'/pressed':>8s} {'ms':>7s}")
    print(head1)
    print(head2)
    print(head3)
    print("-" * len(head2))

    def ratio(part: dict) -> str:
        if part["pressed"] is None:
            return f"{'-':>8s}"
        return f"{part['painted']:.0f}/{part['pressed']:.0f}".rjust(8)

    for slug, s in stats.items():
        b, c = s["boot"], s["change"]
        tail = "" if s["ok"] == runs else f"  ({runs - s['ok']} failed)"
        if s["no_new_run"]:
            tail += f"  (no new run painted in {s['no_new_run']} run(s))"
        print(f"{slug:16s} {cell(s['plot'], 5, 1000, 2)} {cell(s['live'], 5, 1000, 2)} | "
              f"{cell(b['over_200'], 4)} {cell(b['longest'], 7)} {cell(b['tbt'], 6)} {ratio(b)} "
              f"{cell(b['slowest'], 7)} {cell(b['gap'], 5)} | {cell(c['over_200'], 4)} {cell(c['longest'], 7)} "
              f"{cell(c['tbt'], 6)} {ratio(c)} {cell(s['new_run'], 7)}{tail}")

    names = list(goals(next(iter(stats.values())))) if stats else []
    print("\nGoals (issue 19): no long task over 200 ms and TBT ≤ 300 ms from the first plot until live; "
          "after a setting\nchange no long task over 200 ms and steps keep painting (at least "
          f"{GOAL_PAINTED_SHARE:.0%} of the presses made while the new run is computed paint a step)")
    print(f"{'page':16s} " + " ".join(f"{n:>{max(len(n), 8)}s}" for n in names))
    for slug, s in stats.items():
        g = goals(s)
        print(f"{slug:16s} " + " ".join(f"{verdict(g[n]):>{max(len(n), 8)}s}" for n in names))

    print("\n>200: long tasks over 200 ms; longest: the longest task; TBT: Σ (task − 50 ms); painted/pressed: "
          "frames that painted a new t\nfor the presses made in the window, and the presses; slowest: the "
          "longest press → painted step; gap: the longest time between two\nanimation frames (a "
          "cross-check); new run: from the key press to the new run painted.")
    for slug, rs in results.items():
        for e in sorted({r["error"] for r in rs if r.get("error")}):
            print(f"  {slug}: {e}")
        for e in sorted({e for r in rs for e in r.get("errors", [])})[:5]:
            print(f"  {slug}: console error: {e}")
        if any(r.get("longtask") not in (None, True) for r in rs):
            print(f"  {slug}: no longtask observer in this browser: {rs[0]['longtask']}")
        missed = summary(rs)["missed"]
        if missed:
            where = sorted({w for r in rs for *_, w in r.get("missed", [])})
            moves = [(when, a, b) for r in rs for (_, a), (when, b) in zip(r.get("boxes", []), r.get("boxes", [])[1:])]
            print(f"  {slug}: {missed:.0f} press(es) a load (median) made in the windows raised no click on Step"
                  + (f" (they landed on: {', '.join(where[:4])})" if where else " (it was disabled, or the page closed)")
                  + (f"; the Step button moved under them, e.g. from ({moves[0][1]}) to ({moves[0][2]}) px "
                     f"(painted at {moves[0][0] / 1000:.1f} s), while the page was blocked" if moves else ""))

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="cold loads per page (default 3)")
    parser.add_argument("--pages", default="", help="comma-separated slugs (default: all pages)")
    parser.add_argument("--timeout", type=float, default=180, help="seconds per load before giving up")
    parser.add_argument("--site", type=Path, default=SITE, help="the built site (default dist/site)")
    parser.add_argument("--reduced-motion", action="store_true",
                        help="tell the pages to reduce motion: steps jump instead of easing")
    parser.add_argument("--json", type=Path, default=None, help="also write every load's raw record here")
    parser.add_argument("--why", action="store_true",
                        help="also list each page's long tasks from the first plot until live (first run), "
                             "with what ran in them (the long animation frame's longest script)")
    args = parser.parse_args()
    if args.runs < 1:
        sys.exit(f"error: --runs must be at least 1, not {args.runs}")
    site = args.site.resolve()
    if not (site / "index.html").exists():
        sys.exit(f"error: {site}/index.html is missing: build the site first "
                 "(`make build` or `.venv/bin/python build.py [--out DIR]`)")
    if not Path(CHROMIUM).exists():
        sys.exit(f"error: {CHROMIUM} is missing (Debian: apt-get install chromium)")
    from ui.pages import PAGES  # noqa: PLC0415

    wanted = [s for s in args.pages.split(",") if s]
    unknown = sorted(set(wanted) - {p.slug for p in PAGES})
    if unknown:
        sys.exit(f"error: no page {', '.join(unknown)}; the pages: {', '.join(p.slug for p in PAGES)}")
    pages = [p for p in PAGES if (not wanted or p.slug in wanted) and (site / f"{p.slug}.html").exists()]
    if not pages:
        sys.exit(f"error: no page of ui.pages.PAGES is in {site}")
    results = asyncio.run(measure(site, pages, args.runs, int(args.timeout * 1000), args.reduced_motion))
    if args.json:
        args.json.write_text(json.dumps(results))
    report(results, args.runs)
    if args.why:
        why(results)


def why(results: dict) -> None:
    """Each page's long tasks from the first plot until live (its first run that went live),
    each with the long animation frame it fell in: the script that ran longest there (its
    invoker: a timer, a message, a frame callback, a script's load), and the style and layout
    it forced."""
    print("\nLong tasks from the first plot until live (first run): ms at, ms long: what ran longest in its frame")
    for slug, rs in results.items():
        r = next((r for r in rs if not r.get("error") and (r.get("timings") or {}).get("live")), None)
        if r is None:
            continue
        start, end = r["timings"]["firstPlot"], r["timings"]["live"]
        frames = r.get("frames") or []
        print(f"  {slug}:" + ("" if frames else " (no long-animation-frame entries in this browser)"))
        for at, took in r["tasks"]:
            if not start <= at + took <= end + 1:
                continue
            f = next((f for f in frames if f[0] - 1 <= at <= f[0] + f[1]), None)
            what = f"{f[2]} ({f[3]:.0f} ms; forced layout {f[4]:.0f} ms)" if f else "?"
            print(f"    {at:7.0f} {took:5.0f}  {what}")


if __name__ == "__main__":
    main()
