"""sitebuild.wheels: slimming and rewriting wheels, the lock, what the project wheel packages
(small made-up wheels; the real ones are made by `make build`)."""

from __future__ import annotations

import json
import tomllib
import zipfile
from pathlib import Path

import pytest
import setuptools

from sitebuild import ROOT, sha256, wheels


def _wheel(folder: Path, name: str, requires: list[str], module: str = "", files: dict | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{module or name}/__init__.py", "x = 1\n")
        for member, text in (files or {}).items():
            zf.writestr(member, text)
        zf.writestr(f"{name}-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: {}\nVersion: 1.0\n{}".format(
            name, "".join(f"Requires-Dist: {r}\n" for r in requires)))
        zf.writestr(f"{name}-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{name}-1.0.dist-info/RECORD", "")
    return path


def test_rewritten_wheel_keeps_members_and_a_valid_record(tmp_path):
    src = _wheel(tmp_path, "pkg", [], files={"pkg/dist/big.js": "var a;\n"})
    dest = wheels.rewrite_wheel(src, tmp_path / "out" / src.name, lambda n: "/dist/" not in n)
    with zipfile.ZipFile(dest) as zf:
        names = set(zf.namelist())
        record = zf.read("pkg-1.0.dist-info/RECORD").decode()
    assert "pkg/dist/big.js" not in names and "pkg/__init__.py" in names
    assert "pkg/__init__.py,sha256=" in record and record.strip().endswith("RECORD,,")


def test_a_written_wheel_depends_only_on_its_members(tmp_path, monkeypatch):
    """Same members, same bytes (dated 2020-01-01, not by the clock; sorted, the RECORD last):
    the build id and the service worker's cache do not change when nothing did."""
    members = {"b/x.py": b"x = 1\n", "a/__init__.py": b""}
    wheels.write_wheel(tmp_path / "one.whl", members, "a-1.0.dist-info/RECORD")
    monkeypatch.setattr(wheels.zipfile.time, "time", lambda: 2e9)  # 2033: a later build
    wheels.write_wheel(tmp_path / "two.whl", members, "a-1.0.dist-info/RECORD")
    assert sha256(tmp_path / "one.whl") == sha256(tmp_path / "two.whl")
    with zipfile.ZipFile(tmp_path / "one.whl") as zf:
        assert zf.namelist() == ["a/__init__.py", "b/x.py", "a-1.0.dist-info/RECORD"]
        assert {i.date_time for i in zf.infolist()} == {(2020, 1, 1, 0, 0, 0)}


def test_bokeh_and_panel_ship_without_their_javascript(tmp_path, monkeypatch):
    monkeypatch.setattr(wheels, "CACHE", tmp_path / "cache")
    given = {
        "bokeh": _wheel(tmp_path, "bokeh", [], files={"bokeh/server/static/js/bokeh.min.js": "js",
                                                      "bokeh/sampledata/x.csv": "1", "bokeh/models/m.py": ""}),
        "panel": _wheel(tmp_path, "panel", [], files={"panel/dist/panel.min.js": "js", "panel/io/p.py": "",
                                                      "panel/package-lock.json": "{}"}),
        "param": _wheel(tmp_path, "param", []),
    }
    slim = wheels.slim_wheels(given)
    assert slim["param"] == given["param"]
    with zipfile.ZipFile(slim["bokeh"]) as zf:
        assert sorted(n for n in zf.namelist() if not n.startswith("bokeh-")) == ["bokeh/__init__.py", "bokeh/models/m.py"]
    with zipfile.ZipFile(slim["panel"]) as zf:
        assert sorted(n for n in zf.namelist() if not n.startswith("panel-")) == ["panel/__init__.py", "panel/io/p.py"]


def test_lock_follows_pyodide_markers_and_names_the_shipped_wheels(tmp_path):
    """Dependencies are evaluated under Pyodide's markers (tornado is left out), the dropped
    ones go, and each entry names the wheel that ships (bytecode-only) with its sha256."""
    official_lock = {  # as in Pyodide 0.27.7's own lock
        "info": {"arch": "wasm32", "abi_version": "2024_0", "platform": "emscripten_3_1_58",
                 "python": "3.12.7", "version": "0.27.7"},
        "packages": {"numpy": {"name": "numpy", "version": "2.0.2", "file_name": "numpy.whl", "install_dir": "site",
                               "sha256": "00", "package_type": "package", "imports": ["numpy"], "depends": [],
                               "unvendored_tests": True}}}
    built = {
        "app": _wheel(tmp_path / "built", "app", [
            "lib>=1", 'tornado; sys_platform != "emscripten"', "pandas", 'numpy; python_version >= "3.12"',
            'extra-thing; extra == "docs"']),
        "lib": _wheel(tmp_path / "built", "lib", [], module="lib_module"),
    }
    shipped = {name: _wheel(tmp_path / "shipped", name, []) for name in built}
    shipped["lib"].write_bytes(shipped["lib"].read_bytes() + b"\0")  # differs from the built one
    lock = wheels.write_lock(official_lock, {"numpy": None}, built, shipped)
    app, lib = lock["packages"]["app"], lock["packages"]["lib"]
    assert app["depends"] == ["lib", "numpy"]
    assert lib["imports"] == ["lib_module"] and lib["file_name"] == "lib-1.0-py3-none-any.whl"
    assert lib["sha256"] == sha256(shipped["lib"]) != sha256(built["lib"])
    assert lock["packages"]["numpy"]["sha256"] == "00" and lock["info"]["abi_version"] == "2024_0"
    json.dumps(lock)

    with pytest.raises(SystemExit, match="not shipped"):
        wheels.write_lock(official_lock, {}, built, shipped)  # numpy missing


def test_resolve_orders_dependencies_first():
    lock = {"packages": {"a": {"depends": ["b", "c"]}, "b": {"depends": ["c"]}, "c": {"depends": []}}}
    assert wheels.resolve(lock, ["a"]) == ["c", "b", "a"]
    assert wheels.resolve(lock, ["C", "a"]) == ["c", "b", "a"]  # names as the lock spells them


def test_the_wheels_and_the_lock_ship_beside_the_runtime(tmp_path):
    given = [_wheel(tmp_path / "w", "lib", []), _wheel(tmp_path / "w", "app", [])]
    wheels.write_wheels(tmp_path / "site", given, {"packages": {"lib": {}}})
    shipped = tmp_path / "site" / "pyodide"
    assert sorted(p.name for p in shipped.iterdir()) == ["app-1.0-py3-none-any.whl", "lib-1.0-py3-none-any.whl",
                                                         "pyodide-lock.json"]
    assert json.loads((shipped / "pyodide-lock.json").read_text()) == {"packages": {"lib": {}}}


def test_the_project_wheel_holds_sim_and_ui_only():
    """pyproject.toml packages sim and ui for the browser: not the build (sitebuild), the
    tests or the benches."""
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    found = setuptools.find_packages(where=ROOT, **find)
    assert {name.split(".")[0] for name in found} == {"sim", "ui"}
    assert "sitebuild" in setuptools.find_packages(where=ROOT)  # it is a package: only the list keeps it out
