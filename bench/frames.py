"""Steps per second while playing at full speed, on each page of the built site in Chromium.

    .venv/bin/python -m bench.frames [--seconds 4] [--repeat 5] [--min-steps 100] [--steps 12] [--site DIR]

Expects a built site in --site (default dist/site: run `.venv/bin/python build.py` first, or
`build.py --out DIR` for another copy); serves it on a free port in a thread
and opens each page in headless Chromium with every plot at d = 16 and a long stream (tokens or
pairs = 64), at the top speed (`speed=60` in the link). Per page it prints:

Every step runs in the browser: the player (assets/js/player.js) puts frame t of the run into
the views; Python is not called. The page is measured once Python has taken over (live).

- steps/s: Play pressed from t = 0, t read once per animation frame (`lab.player.t`) and timed
  each time it changes, for up to `--seconds` or until the run ends. Median of `--repeat`
  plays, with the view as tall as the page, so that every figure is painted on every step (the
  goal's measure); `laptop` is the same in a 1400 x 1000 view, where the figures out of view
  hold their repaints (assets/js/culling.js).
- show ms: the synchronous time of one step (`lab.player.step()`: frame t into every view).
- → ms: the → key pressed (a real key event, through the shell's keyboard handler) to the
  next painted frame. Medians over `--steps` single steps.

- idle: animation frames/s of the same page with nothing playing, measured for a second before
  each play: the rate this machine paints at all, the goal's "refresh rate" when it is busy.
- eased: frames of the plays in which a step was easing (assets/js/ease.js). At speed 60 a
  step's period (17 ms) is below the shortest easing, so none eases: the plays measure steps
  with animation off. (prefers-reduced-motion also turns easing off, but it also slows Play
  to 2 steps/s, so it cannot be the plays' switch.)
- ease fps: the animated step's own frame rate: Step pressed (`lab.player.step()`, motion
  allowed) and the animation frames painted while it eases, per second of easing (median over
  `--steps` steps, in the laptop view), and the easing's length in ms.

Goals (issue 9): 60 painted steps/s or more while playing (or the display's refresh rate where
that is lower: here the idle rate), → to painted frame 50 ms or less. Medians on a noisy machine; nothing is asserted. The
hybrid page has 11 contexts, so its play lasts 10 steps: it gets more plays, at least
`--min-steps` steps in all.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "dist" / "site"
sys.path.insert(0, str(ROOT))

from serve import make_server  # noqa: E402
from ui.pages import PAGES  # noqa: E402

GOAL_STEPS_PER_S = 60.0  # issue 9 (the display refresh rate here)
GOAL_KEY_MS = 50.0
from bench import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

VIEWPORT = {"width": 1400, "height": 1000}  # a laptop's view
LIVE_TIMEOUT_MS = 180_000  # cold Pyodide on two busy cores
# Every plot at d = 16 and a stream long enough for seconds of play at the goal's rate.
QUERIES = {
    "running-sum": "d=16&tokens=64&speed=60",
    "fixed-state": "d=16&pairs=64&speed=60",
    "gates": "d=16&tokens=256&speed=60",
    "hybrid": "speed=60",
}

# In the page, once per animation frame (so only while the main thread is free to paint): the
# page's t, and the time each new t was seen. Until the run stops or the time is up.
PLAY_JS = """async (seconds) => {
  const readT = () => Number(window.lab.player.t);
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  await frame();
  const first = readT();
  const start = performance.now();
  const changes = [];
  let last = first, eased = 0;
  window.lab.player.play();
  while (performance.now() - start < seconds * 1000) {
    await frame();
    if (window.lab.player.easing) eased++;
    const t = readT();
    if (t !== last) { changes.push([performance.now() - start, t]); last = t; }
    else if (performance.now() - start - (changes.length ? changes[changes.length - 1][0] : 0) > 1500) break;
  }
  return {first, changes, eased};
}"""

# In the page: `steps` single steps with motion allowed; per step, the animation frames painted
# while it eased, per second, and how long it eased. Null when steps do not ease here.
EASE_JS = """async (steps) => {
  const p = window.lab.player, frame = () => new Promise((r) => requestAnimationFrame(r));
  const out = [];
  for (let i = 0; i < steps; i++) {
    if (p.t >= p.tMax) p.reset();
    await frame(); await frame();
    const start = performance.now();
    p.step();
    if (!p.easing) return null;
    let n = 0;
    while (p.easing) { await frame(); n++; }
    const ms = performance.now() - start;
    out.push([n / (ms / 1000), ms]);
  }
  return out;
}"""

# In the page, nothing playing: animation frames per second over `seconds`. The rate at which
# this machine and browser paint at all, measured beside each play (the goal's "display's
# refresh rate where that is lower": a busy machine's idle page drops frames too).
IDLE_JS = """async (seconds) => {
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  await frame();
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < seconds * 1000) { await frame(); n++; }
  return n / ((performance.now() - start) / 1000);
}"""

# In the page: one step's synchronous time (frame t into every view).
SHOW_JS = """async () => {
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));  // start on a quiet frame
  const t0 = performance.now();
  window.lab.player.step();
  return performance.now() - t0;
}"""
# Arms a listener: the time from the next → keydown to the frame painted after it.
KEY_ARM_JS = """() => {
  window.__keyMs = null;
  document.addEventListener("keydown", (e) => {
    const t0 = e.timeStamp;
    requestAnimationFrame(() => setTimeout(() => { window.__keyMs = performance.now() - t0; }, 0));
  }, { once: true, capture: true });
}"""


def open_page(browser, url: str):
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(url)
    page.wait_for_function("window.lab?.state.live === true || window.lab?.state.failed", timeout=LIVE_TIMEOUT_MS)
    if page.evaluate("Boolean(window.lab.state.failed)"):
        raise RuntimeError(f"{url} failed to start")
    # the parts set aside at first paint join once the page is live (assets/js/later.js)
    page.wait_for_function("Boolean(window.lab.timings.joined)", timeout=LIVE_TIMEOUT_MS)
    page.wait_for_timeout(1000)  # let the first paint and start-up notices settle
    return page


def playing(page) -> bool:
    return bool(page.evaluate("window.lab.player.playing"))


def play_rates(page, seconds: float) -> tuple[float, float, int]:
    """One play from t = 0: (steps/s, shown/s, eased frames) from Play pressed to the last new
    t painted.

    steps/s counts every step t advanced; shown/s only the frames that painted a new t. They
    differ when steps run back to back without letting the browser paint in between.
    """
    page.evaluate("window.lab.player.reset()")
    page.wait_for_timeout(300)
    played = page.evaluate(PLAY_JS, seconds)
    if playing(page):
        page.evaluate("window.lab.player.pause()")
    page.wait_for_timeout(300)
    changes = played["changes"]
    if not changes:
        return float("nan"), float("nan"), played["eased"]
    elapsed_s = changes[-1][0] / 1000
    return ((changes[-1][1] - played["first"]) / elapsed_s, len(changes) / elapsed_s,
            played["eased"])


def ease_rates(page, steps: int) -> tuple[float, float]:
    """Median (frames/s painted during a step's easing, the easing's ms) over single steps;
    NaN where steps do not ease (reduced motion, no animation frames)."""
    page.evaluate("window.lab.player.reset()")
    got = page.evaluate(EASE_JS, steps)
    if not got:
        return float("nan"), float("nan")
    return statistics.median(f for f, _ in got), statistics.median(ms for _, ms in got)


def step_times(page, steps: int, t_max: int) -> tuple[float, float]:
    """Median (show ms, → to painted frame ms) over single steps from t = 0, restarting at
    t_max."""
    page.evaluate("window.lab.player.reset()")
    page.locator("body").click(position={"x": 2, "y": 2})  # focus the page, not a control
    show_ms, key_ms = [], []
    for _ in range(steps):
        if page.evaluate("window.lab.player.t") >= t_max:
            page.evaluate("window.lab.player.reset()")
        show_ms.append(page.evaluate(SHOW_JS))
        if page.evaluate("window.lab.player.t") >= t_max:
            page.evaluate("window.lab.player.reset()")
        page.evaluate(KEY_ARM_JS)
        page.keyboard.press("ArrowRight")
        page.wait_for_function("window.__keyMs !== null")
        key_ms.append(page.evaluate("window.__keyMs"))
    return statistics.median(show_ms), statistics.median(key_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="longest play measured")
    parser.add_argument("--repeat", type=int, default=5, help="plays per page (median printed)")
    parser.add_argument("--steps", type=int, default=12, help="single steps timed per page")
    parser.add_argument("--min-steps", type=int, default=100,
                        help="more plays on a page whose run is short, until they hold this "
                             "many steps (the hybrid page's run is 10)")
    parser.add_argument("--pages", nargs="*", help="slugs to measure (default: all)")
    parser.add_argument("--site", type=Path, default=SITE,
                        help="the built site to measure (default: dist/site)")
    args = parser.parse_args()
    site = args.site.resolve()
    if not (site / "index.html").exists():
        sys.exit(f"error: {site}/index.html is missing: build the site first "
                 "(.venv/bin/python build.py [--out DIR])")

    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    rows = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for info in PAGES:
                if args.pages and info.slug not in args.pages:
                    continue
                page = open_page(browser, f"{base}{info.slug}.html?{QUERIES.get(info.slug, 'speed=60')}")
                t_max = int(page.evaluate("window.lab.player.tMax"))
                n_plays = max(args.repeat, math.ceil(args.min_steps / t_max))
                # A laptop's view first (figures below it are paused), then one tall enough
                # for every figure of the page to be painted on every step.
                laptop = [play_rates(page, args.seconds) for _ in range(n_plays)]
                ease_fps, ease_ms = ease_rates(page, args.steps)
                height = int(page.evaluate("document.documentElement.scrollHeight"))
                page.set_viewport_size({"width": VIEWPORT["width"], "height": height})
                page.wait_for_timeout(500)
                plays, idle = [], []
                for _ in range(n_plays):
                    idle.append(page.evaluate(IDLE_JS, 1.0))
                    plays.append(play_rates(page, args.seconds))
                # one step's own cost and the key's latency with animation off, as before easing
                page.emulate_media(reduced_motion="reduce")
                show_ms, key_ms = step_times(page, args.steps, t_max)
                page.close()
                rate = statistics.median(r for r, _, _ in plays)
                shown = statistics.median(s for _, s, _ in plays)
                shown_laptop = statistics.median(s for _, s, _ in laptop)
                eased = sum(e for _, _, e in plays + laptop)
                rows.append((info.slug, rate, shown, shown_laptop, statistics.median(idle), show_ms,
                             key_ms, eased, ease_fps, ease_ms))
                for name, runs in (("all in view", plays), ("laptop view", laptop)):
                    print(f"[frames] {info.slug}, {name}: plays "
                          + ", ".join(f"{r:.1f} steps/s ({s:.1f} shown/s)" for r, s, _ in runs),
                          flush=True)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()

    print(f"\n{'page':<13} {'steps/s':>8} {'shown/s':>8} {'laptop':>7} {'idle':>6} {'show ms':>8} "
          f"{'→ ms':>6} {'eased':>5} {'ease fps':>8} {'ease ms':>7}  result (goals: "
          f"{GOAL_STEPS_PER_S:.0f} shown/s with every figure in view, or the idle rate where "
          f"lower; → ≤ {GOAL_KEY_MS:.0f} ms; an easing at the idle rate)")
    for slug, rate, shown, shown_laptop, idle, show_ms, key_ms, eased, ease_fps, ease_ms in rows:
        goal = min(GOAL_STEPS_PER_S, idle)
        met = "met" if shown >= goal * 0.97 and key_ms <= GOAL_KEY_MS else "not met"
        print(f"{slug:<13} {rate:>8.1f} {shown:>8.1f} {shown_laptop:>7.1f} {idle:>6.1f} {show_ms:>8.1f} "
              f"{key_ms:>6.1f} {eased:>5} {ease_fps:>8.1f} {ease_ms:>7.0f}  {met}")
    print("\nMedians. steps/s: t advanced per second of play at speed 60; shown/s: frames that "
          "painted a new t per second, with the whole page in view;\nlaptop: shown/s in a "
          f"{VIEWPORT['width']}x{VIEWPORT['height']} view (figures out of it hold their repaints); "
          "idle: frames/s painted with nothing playing, measured before each play (the rate this "
          "machine paints at);\nshow: one step's synchronous time; →: the key pressed to the next "
          "painted frame (both with reduced motion: no easing); eased: frames of the plays in "
          "which a step eased (0: the plays ran with animation off);\nease fps: frames painted "
          "per second while one Step eased (laptop view), ease ms: how long it eased.")


if __name__ == "__main__":
    main()
