"""A choice answered ahead of time, before Python: the click to the frame that paints its run.

    .venv/bin/python -m bench.choices [--rounds 5] [--site DIR]

Expects a built site in --site (default dist/site). Serves it on a free port and opens each page
whose config lists choices answered ahead of time (ui/ahead.py: running-sum's preset, hybrid's
models A and B) in headless Chromium, with Python held back for good (every file under pyodide/
waits). In a new browser context per round (each settled first: bench.settle), it makes every
choice in turn, from a quiet frame. A button group's with a real pointer: "cold", the first
choice of the round with the pointer coming straight to it (its file fetched at the click, as on
a phone), then "near", the others (the runs' files already fetched as the pointer came to the
settings: assets/js/ahead.js). A menu's (a select) by choosing the option, each "at the choice":
a menu's many runs are fetched only when chosen, so each choice fetches its file (and the way back
from the run before it was fetched with that one).

A choice counts as painted in the first animation frame after its run is on screen (the shell's
state.prebuilt names it). Per choice it prints the median and worst ms from the click to that
frame, and the shell's own split (lab.timings.choice: files, patches, new frames shown).

Goal (issue 37 item 4): a choice responds without Python, in one task; "a frame or two" is the
issue's wording. Nothing is asserted (tests/e2e/test_choices_before_python.py checks that each
choice responds).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "dist" / "site"
sys.path.insert(0, str(ROOT))

from bench import CHROMIUM, CHROMIUM_ARGS, settle  # noqa: E402
from serve import make_server  # noqa: E402

# In the page: from a quiet frame, the next click's time, and the frame after the run is on screen.
# (a select's "input" event crosses the shadow roots BokehJS draws it in; its "change" does not)
WATCH_JS = """([file, kind]) => new Promise((ready) => requestAnimationFrame(() => setTimeout(() => {
  window.__took = undefined;
  let t0 = null;
  document.addEventListener(kind, () => { t0 = performance.now(); }, { capture: true, once: true });
  const poll = () => {
    const now = lab.state.prebuilt ? lab.state.prebuilt.file : null;
    if (t0 !== null && now === file) requestAnimationFrame(() => { window.__took = performance.now() - t0; });
    else requestAnimationFrame(poll);
  };
  poll();
  ready();
}, 0)))"""


def config_of(page) -> dict:
    return json.loads(page.evaluate("document.getElementById('lab-config').textContent"))


def menu_of(page, entry: dict):
    """The select whose options are the entry's choices (hybrid's model A or B), or None (a
    button group's)."""
    for select in page.locator("select").all():
        if select.is_visible() and set(select.locator("option").all_text_contents()) == set(entry["labels"]):
            return select
    return None


def one_round(browser, url: str) -> dict[str, dict]:
    """{choice: {"ms", "split"}} for every choice of the page's settings answered ahead of time."""
    context = browser.new_context(service_workers="block", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/pyodide/**", lambda route: None)  # held for good: never answered
    settle()
    page.goto(url)
    page.wait_for_function("window.lab && window.lab.state.prerendered === true", timeout=60_000)
    config = config_of(page)
    got = {}
    for entry in config.get("choices", []):
        order = [c for c, i in entry["labels"].items() if i >= 0] + [c for c, i in entry["labels"].items() if i < 0]
        menu = menu_of(page, entry)
        for n, choice in enumerate(order):
            index = entry["labels"][choice]
            file = config["prebuilt"][index]["file"] if index >= 0 else None
            if menu is not None:
                page.evaluate(WATCH_JS, [file, "input"])
                menu.select_option(label=choice)
                page.wait_for_function("window.__took !== undefined", timeout=10_000)
                split = page.evaluate("JSON.stringify(lab.timings.choice)")
                got[f"{entry['setting']}: {choice}"] = {"ms": page.evaluate("window.__took"), "split": json.loads(split)}
                continue
            button = page.locator(".bk-btn-group button", has_text=re.compile(f"^{re.escape(choice)}$")).first
            box = button.bounding_box()
            page.evaluate(WATCH_JS, [file, "click"])
            if n == 0:  # straight to it: nothing fetched before the click
                page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            else:
                page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                page.wait_for_timeout(200)
                page.mouse.down()
                page.mouse.up()
            page.wait_for_function("window.__took !== undefined", timeout=10_000)
            split = page.evaluate("lab.timings.choice ? JSON.stringify(lab.timings.choice) : null")
            got[f"{choice} ({'cold' if n == 0 else 'near'})"] = {"ms": page.evaluate("window.__took"),
                                                                 "split": json.loads(split) if split else {}}
    page.unroute_all(behavior="ignoreErrors")  # (the held requests let go quietly)
    context.close()
    return got


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="new contexts per page (default 5)")
    parser.add_argument("--site", type=Path, default=SITE, help="the built site (default dist/site)")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").exists():
        sys.exit(f"error: no built site in {args.site}: run `make build` first")
    pages = sorted(p.stem for p in args.site.glob("*.html")
                   if '"choices": [{' in p.read_text(encoding="utf-8", errors="replace"))

    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    server = make_server(args.site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    results: dict[str, dict[str, list]] = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for slug in pages:
                for r in range(args.rounds):
                    for name, value in one_round(browser, f"{base}{slug}.html").items():
                        results.setdefault(slug, {}).setdefault(name, []).append(value)
                    print(f"[choices] {slug}: round {r + 1}/{args.rounds}", flush=True)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()

    print(f"\nA choice answered ahead of time, Python held: ms from the click to the frame painted "
          f"with its run (median and worst of {args.rounds}); the shell's split, medians: files "
          "loaded, patches applied (BokehJS's layout included), new frames shown")
    print(f"{'page':14} {'choice':36} {'median':>7} {'worst':>7} {'files':>6} {'patches':>8} {'shown':>6}")
    for slug, choices in results.items():
        for name, runs in choices.items():
            ms = [x["ms"] for x in runs]
            split = {k: statistics.median(x["split"].get(k, 0) for x in runs) for k in ("load", "patch", "show")}
            print(f"{slug:14} {name:36} {statistics.median(ms):7.0f} {max(ms):7.0f} {split['load']:6.0f} "
                  f"{split['patch']:8.0f} {split['show']:6.0f}")


if __name__ == "__main__":
    main()
