"""The zoo: every model the Lab knows on one static page (zoo.html), its numbers from sim.

One row per model: the hybrid page's presets (sim.cache.PRESETS, their config.json from
sim.presets.PRESET_HF_CONFIGS) and every published config.json the library reads
(tests/sim/hf_configs/published/, shipped as data in zoo/). Each row is made here by
ui/zoo.py's ``row`` and ``row_html``, the functions the zoo's worker (assets/zoo-worker.js)
runs in the browser on a config.json the reader pastes: one contract for both. Every figure is
sim's, under the hybrid page's own settings (ui/zoo.py SETTINGS), and written into the table:
the page is live at first paint and loads no Python, BokehJS or Panel (assets/zoo.js sorts and
filters); Python (Pyodide, numpy and the project's wheel, no more) starts only for a paste.

build.py calls ``write_zoo`` once the other pages are written (before the policy and the
service worker, which then cover zoo.html and zoo/ like every other file).
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

from sitebuild import ROOT, BuildError, copy, log

PUBLISHED = ROOT / "tests" / "sim" / "hf_configs" / "published"


def _ui_zoo():
    sys.path.insert(0, str(ROOT))
    from ui import zoo  # noqa: PLC0415

    return zoo


def models() -> list[dict]:
    """Every model of the zoo: {id, name, source, model, config} (config: the config.json as
    a dict, or None), presets first."""
    from sim import cache  # noqa: PLC0415
    from sim.hf_reader import parse_config  # noqa: PLC0415
    from sim.presets import PRESET_HF_CONFIGS  # noqa: PLC0415

    out = [{"id": key, "name": model.name, "source": "preset", "model": model,
            "config": PRESET_HF_CONFIGS.get(key)} for key, model in cache.PRESETS.items()]
    files = sorted(PUBLISHED.glob("*.config.json"))
    if not files:
        raise BuildError(f"zoo: no config.json in {PUBLISHED.relative_to(ROOT)}")
    for path in files:
        stem = path.name.removesuffix(".config.json")
        out.append({**_ui_zoo().entry_of(parse_config(path.read_bytes()), stem, stem, "published"),
                    "file": path})
    return out


def rows() -> list[dict]:
    """The zoo's rows, JSON-ready (zoo/zoo.json), in the order of ``models``."""
    return [_ui_zoo().row(entry) for entry in models()]


def worker_config(out: Path) -> dict:
    """What the zoo's worker loads (ui/zoo.py WORKER, its messages and function): Pyodide's
    runtime, numpy by name from the site's lock, the project's wheel by its file (its lock entry
    would bring Bokeh and Panel), the runtime's packed files and their lengths, the most a
    config.json may hold and the download in bytes (said before it starts)."""
    from sim.hf_reader import MAX_CONFIG_BYTES  # noqa: PLC0415
    from sitebuild import PROJECT, norm  # noqa: PLC0415
    from sitebuild.pins import PINS  # noqa: PLC0415
    from sitebuild.runtime import packed_sizes, shipped_name  # noqa: PLC0415

    lock_file = out / "pyodide" / "pyodide-lock.json"
    if not lock_file.exists():
        raise BuildError("zoo: pyodide/pyodide-lock.json is not written yet; the zoo's worker loads from it")
    lock = json.loads(lock_file.read_text())["packages"]
    packages = ["numpy"]
    wheel = lock[norm(PROJECT)]["file_name"]
    files = [shipped_name(n) for n in PINS["pyodide"]["files"]]
    files += [lock[p]["file_name"] for p in packages] + [wheel]
    return {**_ui_zoo().WORKER, "packages": packages, "wheel": wheel, "packed": packed_sizes(out),
            "max_bytes": MAX_CONFIG_BYTES, "download_bytes": sum((out / "pyodide" / f).stat().st_size for f in files)}


def write_zoo(out: Path, build_id: str) -> list[str]:
    """zoo.html (the table, rendered), zoo/zoo.json (the rows) and zoo/<name>.config.json (the
    published files, byte for byte) into `out`; the zoo's card into index.html. Returns the files."""
    sys.path.insert(0, str(ROOT))
    from ui.pages import PAGES  # noqa: PLC0415
    from ui.urlstate import SHELL_KEYS  # noqa: PLC0415

    table = rows()
    for path in sorted(PUBLISHED.glob("*.config.json")):
        copy(path, out / "zoo" / path.name)
    (out / "zoo" / "zoo.json").write_text(json.dumps(table, separators=(",", ":")))
    nav = "".join(f'<a href="{p.slug}.html">{html.escape(p.short)}</a>' for p in PAGES)
    page = (ROOT / "assets" / "zoo.html").read_text()
    config = {"page": "zoo", "link": {"shell": SHELL_KEYS},  # the shell's flags, for boot-early.js
              "worker": worker_config(out)}  # the zoo's Python, for a pasted config.json
    for key, value in {"NAV": nav + '<a href="zoo.html" aria-current="page">Zoo</a>',
                       "ROWS": "".join(_ui_zoo().row_html(r) for r in table), "COUNT": str(len(table)),
                       "BUILD": build_id,
                       "CONFIG": json.dumps(config).replace("</", "<\\/")}.items():
        if "{{" + key + "}}" not in page:
            raise BuildError(f"assets/zoo.html: the placeholder {{{{{key}}}}} is missing")
        page = page.replace("{{" + key + "}}", value)
    (out / "zoo.html").write_text(page)
    index = (out / "index.html").read_text()
    card = ('<li><a class="card" href="zoo.html"><span class="num">Z</span><strong>The zoo</strong>'
            f"<span>Every model the Lab knows ({len(table)}), side by side: its layers, its cache at "
            "32K, 128K and 1M tokens, its weights and what fits one H100.</span></a></li>")
    if index.count("</ol>") != 1:
        raise BuildError("index.html: expected one list of cards (</ol>) to add the zoo's card to")
    (out / "index.html").write_text(index.replace("</ol>", card + "</ol>"))
    log(f"zoo: {len(table)} models in zoo.html, their config.json files in zoo/")
    return ["zoo.html"]
