"""Pages: each page's default run rendered in CPython, written into the shell (assets/shell.html)
with its configuration; and the index.

The page shows that run at first paint and the browser's player steps it before Pyodide has
loaded; the live page then takes it over model for model (ui/app.py).
"""

from __future__ import annotations

import concurrent.futures
import html
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from sitebuild import ROOT, BuildError, formulas, log
from sitebuild.pins import PINS
from sitebuild.runtime import PACKED, packed_sizes, shipped_name
from sitebuild.snapshot import for_page
from sitebuild.static import fetch_katex
from sitebuild.wheels import resolve


def download_sizes(out: Path, lock: dict, packages: list[str]) -> dict[str, int]:
    """What a page's loader fetches, in bytes, for its progress: the runtime's files (of them the
    packed ones, which a start from the snapshot fetches only once live) and the wheels of
    `packages` with their dependencies."""
    needed = resolve(lock, packages)
    return {"core": sum((out / "pyodide" / shipped_name(n)).stat().st_size for n in PINS["pyodide"]["files"]),
            "packed": sum((out / "pyodide" / shipped_name(n)).stat().st_size for n in PACKED),
            "wheels": sum((out / "pyodide" / lock["packages"][n]["file_name"]).stat().st_size for n in needed),
            "count": len(needed)}


def prerender_pages(only: list[str] | None = None) -> dict[str, dict]:
    """slug -> each page's default run rendered ahead of time (``prerender_page``), for the
    pages of ui.pages.PAGES (or of `only`)."""
    sys.path.insert(0, str(ROOT))
    from ui.pages import PAGES  # noqa: PLC0415

    chosen = [p for p in PAGES if not only or p.slug in only]
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 2)) as pool:
        return dict(zip([p.slug for p in chosen], pool.map(prerender_page, chosen)))


def render_pages(out: Path, packages: list[str], sizes: dict[str, int], build_id: str,
                 ahead_of: dict[str, dict], allow_missing: bool = False, only: list[str] | None = None,
                 snapshot: dict | None = None) -> list[str]:
    """One HTML page per entry of ui.pages.PAGES (or of `only`) and the index, into `out`, each
    showing its run rendered ahead of time (`ahead_of`, from ``prerender_pages``); each page's
    config names the packages to load, their `sizes`, the build and the worker (its messages
    and the memory snapshot it starts from). Returns the files."""
    sys.path.insert(0, str(ROOT))
    from ui.pages import PAGES  # noqa: PLC0415
    from ui.worker import worker_contract  # noqa: PLC0415

    shell = (ROOT / "assets" / "shell.html").read_text()
    # each page's lesson text, its formulas typeset by KaTeX here (one Node.js run for all)
    texts = formulas.typeset({p.slug: (ROOT / "assets" / "texts" / f"{p.slug}.html").read_text()
                              for p in PAGES if (ROOT / "assets" / "texts" / f"{p.slug}.html").exists()},
                             fetch_katex())
    nav = [(p.slug, p.short) for p in PAGES]
    packed = packed_sizes(out)  # the runtime's files the worker decodes (py-fetch.js), their lengths
    written = []
    for page in PAGES:
        if only and page.slug not in only:
            continue
        entry = ROOT / "site" / f"{page.module}.py"
        if not entry.exists() and allow_missing:
            log(f"skipping {page.slug}: site/{page.module}.py is not written yet")
            continue
        if not entry.exists():
            raise BuildError(f"{page.slug}: entry script site/{page.module}.py is missing")
        ahead = ahead_of[page.slug]
        config = {"page": page.slug, "title": page.title, "packages": packages, "sizes": sizes,
                  "build": build_id, "code": entry.read_text(),
                  "link": ahead["link"],  # the link contract, stated in ui/urlstate.py
                  "contract": ahead["contract"],  # role classes, frames, worker messages: ui/contract.py
                  "worker": {**worker_contract(for_page(snapshot, page.slug)),  # Python's environment, its heap
                             "packed": packed},
                  "prerender": {k: ahead[k] for k in ("csv", "t_max")},
                  # the runs of the links the page itself offers, built ahead of time too (runs/),
                  # and which of them each choice of a setting answered ahead of time is (ui/ahead.py)
                  "prebuilt": write_runs(out, page.slug, ahead.get("runs", [])),
                  "choices": ahead.get("choices", [])}
        body = shell
        for key, value in {
            "TITLE": html.escape(page.title),
            "SUMMARY": html.escape(page.summary),
            "NAV": "".join(
                f'<a href="{slug}.html"{" aria-current=page" if slug == page.slug else ""}>{html.escape(title)}</a>'
                for slug, title in nav),
            "TEXT": texts.get(page.slug, ""),
            "CONFIG": json.dumps(config).replace("</", "<\\/"),
            "DOC": ahead["doc"].replace("</", "<\\/"),
            "BUILD": build_id,
            # the timeline's "t / t_max" as the default run has it, and room for its widest
            # ("t_max / t_max", in digits' widths): nothing beside it moves as the page starts
            # or steps (the slider had moved when "0 / 0" became "0 / 12", and at t = 10)
            "T_MAX": str(ahead["t_max"]),
            "T_WIDTH": str(2 * len(str(ahead["t_max"])) + 3),
        }.items():
            body = body.replace("{{" + key + "}}", value)
        (out / f"{page.slug}.html").write_text(body)
        written.append(f"{page.slug}.html")
    index = (ROOT / "assets" / "index.html").read_text()
    cards = "".join(
        f'<li><a class="card" href="{p.slug}.html"><span class="num">{i}</span>'
        f'<strong>{html.escape(p.title)}</strong><span>{html.escape(p.summary)}</span></a></li>'
        for i, p in enumerate(PAGES, 1))
    (out / "index.html").write_text(index.replace("{{CARDS}}", cards).replace("{{BUILD}}", build_id))
    log(f"pages: index.html, {', '.join(written)}")
    return ["index.html", *written]


RUNS = "runs"  # the folder of the runs built ahead of time for links the pages offer


def write_runs(out: Path, slug: str, runs: list[dict]) -> list[dict]:
    """Each run of a link the page offers (ui.ahead.ahead_runs) as out/runs/<slug>-<n>.json: its
    CSV, last t, and the patches of the default page to it and back, fetched by the shell only
    for such a link or choice (assets/js/link.js loadRun). Returns what the page's config says
    of them: the offered link's own settings, the run's full settings, its file and last t."""
    listed = []
    for n, run in enumerate(runs, 1):
        name = f"{RUNS}/{slug}-{n}.json"
        (out / RUNS).mkdir(exist_ok=True)
        # (the patches are JSON text already: written as they are, not parsed and written again)
        (out / name).write_text(f'{{"csv": {json.dumps(run["csv"])}, "t_max": {int(run["t_max"])}, '
                                f'"patch": {run["patch"]}, "back": {run["back"]}}}')
        listed.append({"link": run["link"], "query": run["query"], "file": name, "t_max": run["t_max"]})
    if listed:
        log(f"{slug}: {len(listed)} run(s) of its own links built ahead of time "
            f"({', '.join(r['link'] for r in listed)})")
    return listed


def prerender_page(info) -> dict:
    """The page's default run rendered in CPython (ui.app.prerender), in a fresh process as
    the browser's live page is built: shown at first paint and stepped by the browser's player
    before Pyodide has loaded, then taken over by Python model for model."""
    script = ("import json, sys; from ui.panel_private import leave_out; leave_out();"  # as in the worker
              "from ui.app import prerender; from ui.pages import PAGES, page_class;"
              "info = next(p for p in PAGES if p.slug == sys.argv[1]);"
              "json.dump(prerender(page_class(info)), sys.stdout)")
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", script, info.slug], cwd=ROOT,
                            capture_output=True, text=True)
    if result.returncode:
        raise BuildError(f"{info.slug}: rendering the default run failed:\n{result.stderr[-3000:]}")
    ahead = json.loads(result.stdout)
    log(f"{info.slug}: default run rendered ahead of time ({len(ahead['doc']) / 1e3:.0f} kB "
        f"document, t up to {ahead['t_max']}, {time.monotonic() - started:.1f} s)")
    return ahead
