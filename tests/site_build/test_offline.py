"""sitebuild.offline: the service worker keeps every file of the site, in one cache per build."""

from __future__ import annotations

import json
import re

from sitebuild import offline


def test_the_service_worker_lists_every_file_once_under_this_build(tmp_path):
    for name in ("index.html", "gates.html", "assets/lab.css", "assets/sw.js", "pyodide/pyodide.js",
                 "static/katex/fonts/KaTeX_Main-Regular.woff2"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    offline.write_service_worker(tmp_path, "abc123def456")
    worker = (tmp_path / "sw.js").read_text()
    assert "__BUILD__" not in worker and "__FILES__" not in worker
    assert 'const CACHE = "lab-abc123def456";' in worker
    files = json.loads(re.search(r"const FILES = (\[.*?\]);", worker)[1])
    assert files == ["./", "assets/lab.css", "gates.html", "index.html", "pyodide/pyodide.js",
                     "static/katex/fonts/KaTeX_Main-Regular.woff2"]  # the template and sw.js itself left out
    assert not (tmp_path / "assets" / "sw.js").exists()  # the template does not ship
