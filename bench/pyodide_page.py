"""Making each page's object and its document in Pyodide, with and without Bokeh's defaults
remembered per class (ui.panel_private.remember_defaults): what the worker does between the
restore and going live.

    .venv/bin/python bench/pyodide_page.py [--rounds 5] [--site DIR]

Runs the site's own Pyodide in Node, restored from the built site's memory snapshot as the
worker restores it (bench/pyodide_page.js), one process per variant, the variants alternating
(--pairs processes each), every page built --rounds times in each. Prints per page the median
of each variant and their ratio. Needs Node 18+ and a built site with a snapshot.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sitebuild.bytecode import find_node  # noqa: E402
from sitebuild.runtime import packed_sizes  # noqa: E402


def run(site: Path, rounds: int, remember: bool) -> dict:
    node = find_node()
    if node is None:
        sys.exit("bench/pyodide_page.py: needs Node.js 18+ (apt-get install nodejs)")
    done = subprocess.run([node[0], str(ROOT / "bench" / "pyodide_page.js"), str(site / "pyodide") + "/",
                           str(site / "build-info.json"), str(rounds), "1" if remember else "0",
                           json.dumps(packed_sizes(site))],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench/pyodide_page.js failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="builds of every page per process (default 5)")
    parser.add_argument("--pairs", type=int, default=2, help="processes per variant, alternating (default 2)")
    parser.add_argument("--site", type=Path, default=ROOT / "dist" / "site")
    args = parser.parse_args()
    if not (args.site / "build-info.json").exists() or not json.loads(
            (args.site / "build-info.json").read_text()).get("snapshot"):
        sys.exit(f"{args.site}: no built site with a memory snapshot (make build)")
    runs: dict[bool, dict[str, list]] = {False: {}, True: {}}
    for _ in range(args.pairs):
        for remember in (False, True):
            for slug, times in run(args.site, args.rounds, remember).items():
                runs[remember].setdefault(slug, []).extend(times)
    print(f"page object + document in Pyodide (Node), ms, median of {args.pairs} x {args.rounds} builds")
    print(f"{'page':16} {'as Bokeh does':>22} {'defaults remembered':>22} {'ratio':>6}")
    ratios = []
    for slug, before in runs[False].items():
        after = runs[True][slug]
        b = [statistics.median(x[i] for x in before) for i in (0, 1)]
        a = [statistics.median(x[i] for x in after) for i in (0, 1)]
        ratio = sum(a) / sum(b)
        ratios.append(ratio)
        print(f"{slug:16} {b[0]:7.0f} + {b[1]:5.0f} = {sum(b):5.0f} {a[0]:7.0f} + {a[1]:5.0f} = {sum(a):5.0f} {ratio:6.2f}")
    print(f"ratio, median over pages: {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
