"""sitebuild.pages: the shell filled for a page, the index, the loader's sizes (the default run
rendered ahead of time is stood in for: the real one runs in `make build`)."""

from __future__ import annotations

import json
import re

from sitebuild import ROOT, pages, zstd


def test_every_page_carries_the_one_link_contract():
    """lab-config's link is ui.urlstate's contract for that page: the shell reads nothing else."""
    from ui.pages import PAGES, page_class  # noqa: PLC0415
    from ui.urlstate import SHELL_KEYS, link_contract  # noqa: PLC0415

    for info in PAGES[:2]:
        contract = link_contract(page_class(info)())
        assert contract["shell"] == SHELL_KEYS
        assert set(contract["settings"]).isdisjoint(SHELL_KEYS), info.slug
    scripts = [*(ROOT / "assets").glob("*.js"), *(ROOT / "assets" / "js").glob("*.js")]
    shell = "".join(p.read_text() for p in scripts)
    assert scripts, "the shell's scripts moved: point this test at them"
    assert not re.search(r"SHELL_KEYS\s*=", shell) and '["t", "embed"' not in shell  # no second list


def test_a_page_is_the_shell_with_its_run_config_and_links(tmp_path, monkeypatch):
    from ui.contract import contract  # noqa: PLC0415
    from ui.pages import PAGES  # noqa: PLC0415
    from ui.worker import WORKER_ENV  # noqa: PLC0415

    ahead = {"doc": '{"roots": ["</script><b>"]}', "link": {"shell": ["t"], "settings": {}},
             "contract": contract(), "csv": "t,x\n0,1\n", "t_max": 7}
    monkeypatch.setattr(pages, "prerender_page", lambda info: ahead)
    sizes = {"core": 10, "wheels": 20, "count": 3}
    snapshot = {"bundle": "pyodide/lab-packages.bin.zst", "table_base": 12, "heap": "pyodide/lab-snapshot.bin.zst",
                "heaps": {"fixed-state": {"delta": "pyodide/lab-snapshot-fixed-state.bin.zst", "premade": True},
                          "gates": {"delta": "pyodide/lab-snapshot-gates.bin.zst", "premade": True}}}
    ahead_of = pages.prerender_pages(only=["fixed-state"])
    assert ahead_of == {"fixed-state": ahead}
    (tmp_path / "pyodide").mkdir()
    # as the build ships it: the standard library as zstd frames (sitebuild/runtime.py)
    (tmp_path / "pyodide" / "python_stdlib.zip.zst").write_bytes(zstd.compress(b"w" * 70_000))
    written = pages.render_pages(tmp_path, ["numpy"], sizes, "abc123", ahead_of, only=["fixed-state"],
                                 snapshot=snapshot)
    assert written == ["index.html", "fixed-state.html"]

    page = (tmp_path / "fixed-state.html").read_text()
    config = json.loads(re.search(r'<script id="lab-config" type="application/json">(.*?)</script>',
                                  page, re.S)[1].replace("<\\/", "</"))
    assert config["page"] == "fixed-state" and config["build"] == "abc123" and config["sizes"] == sizes
    assert config["packages"] == ["numpy"] and config["link"] == ahead["link"]
    assert config["prerender"] == {"csv": "t,x\n0,1\n", "t_max": 7}
    # the contract (roles, frames, the worker's messages) and the worker's start, as stated in Python
    assert config["contract"] == contract() and set(config["contract"]["worker"]) >= {"start", "page", "patch", "idle"}
    assert config["worker"] == {"env": WORKER_ENV, "snapshot": {  # the shared bundle and heap, the page's changes
        "bundle": "pyodide/lab-packages.bin.zst", "table_base": 12, "heap": "pyodide/lab-snapshot.bin.zst",
        "delta": "pyodide/lab-snapshot-fixed-state.bin.zst", "premade": True},
        "packed": {"python_stdlib.zip": 70_000}}  # its length decoded, checked there
    assert config["code"] == (ROOT / "site" / "fixed_state.py").read_text()
    doc = re.search(r'<script id="lab-doc" type="application/json">(.*?)</script>', page, re.S)[1]
    assert json.loads(doc.replace("<\\/", "</")) == json.loads(ahead["doc"])  # "</script>" cannot close it
    assert '<a href="fixed-state.html" aria-current=page>' in page and "{{" not in page
    assert page.count("<a href=") >= len(PAGES)

    index = (tmp_path / "index.html").read_text()
    cards = re.findall(r'<a class="card" href="([\w-]+)\.html"><span class="num">(\d+)</span>', index)
    assert cards == [(p.slug, str(i)) for i, p in enumerate(PAGES, 1)]  # every page, even one not built
    assert "abc123" in index and "{{" not in index


def test_the_loader_is_told_what_it_downloads(tmp_path, monkeypatch):
    """The runtime's files and the wheels of the packages with their dependencies, each once."""
    monkeypatch.setitem(pages.PINS, "pyodide", {"files": ["pyodide.js", "pyodide-lock.json", "python_stdlib.zip"]})
    shipped = tmp_path / "pyodide"
    shipped.mkdir()
    # the standard library ships as zstd frames (sitebuild/runtime.py): its download is the .zst file's
    for name, size in {"pyodide.js": 100, "pyodide-lock.json": 10, "python_stdlib.zip.zst": 5000,
                       "a.whl": 1000, "b.whl": 2000, "c.whl": 4000}.items():
        (shipped / name).write_bytes(b"x" * size)
    lock = {"packages": {"a": {"depends": ["b"], "file_name": "a.whl"}, "b": {"depends": [], "file_name": "b.whl"},
                         "c": {"depends": [], "file_name": "c.whl"}}}
    assert pages.download_sizes(tmp_path, lock, ["a", "b"]) == {"core": 5110, "packed": 5000, "wheels": 3000, "count": 2}


def test_the_runs_of_a_pages_own_links_are_written_beside_it(tmp_path):
    """sitebuild.pages.write_runs: each run as runs/<slug>-<n>.json (its CSV, last t and the
    patches of the default document to it and back, as made), and what the page's config says
    of each; none, no folder."""
    runs = [{"link": "preset=worked+example", "query": "preset=worked+example&d=4", "csv": "t,x\n0,1\n",
             "t_max": 2, "patch": '{"events":[{"kind":"ModelChanged","attr":"text","new":"</script>"}]}',
             "back": '{"events":[]}'}]
    listed = pages.write_runs(tmp_path, "running-sum", runs)
    assert listed == [{"link": "preset=worked+example", "query": "preset=worked+example&d=4",
                       "file": "runs/running-sum-1.json", "t_max": 2}]
    written = json.loads((tmp_path / "runs" / "running-sum-1.json").read_text())
    assert written == {"csv": "t,x\n0,1\n", "t_max": 2, "patch": json.loads(runs[0]["patch"]),
                       "back": {"events": []}}
    assert pages.write_runs(tmp_path / "other", "gates", []) == [] and not (tmp_path / "other").exists()
