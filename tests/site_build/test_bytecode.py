"""sitebuild.bytecode: the compiler the shipped Pyodide runs, here run by this Python on a small
zip (the real one runs in Node.js during `make build`)."""

from __future__ import annotations

import importlib.util
import json
import marshal
import sys
import zipfile

import pytest

from sitebuild import bytecode


def _compile(tmp_path, members: dict[str, str], keep_source: bool) -> dict[str, bytes]:
    src, out = tmp_path / "src.zip", tmp_path / f"out-{keep_source}.zip"
    with zipfile.ZipFile(src, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    jobs = [(str(src), str(out), "/lib/python3.12/site-packages/", keep_source)]
    exec(bytecode.PYC_COMPILER, {"JOBS": json.dumps(jobs)})
    with zipfile.ZipFile(out) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _run(pyc: bytes) -> dict:
    assert pyc[:4] == importlib.util.MAGIC_NUMBER
    namespace: dict = {}
    exec(marshal.loads(pyc[16:]), namespace)
    return namespace


def test_wheels_become_bytecode_and_what_does_not_compile_stays_source(tmp_path, capsys):
    members = {"pkg/__init__.py": "x = 6 * 7\n", "pkg/bad.py": "def (:\n", "pkg/data.txt": "kept as is"}
    compiled = _compile(tmp_path, members, keep_source=False)
    assert sorted(compiled) == ["pkg/__init__.pyc"]  # bad.py and data.txt stay as they were
    assert _run(compiled["pkg/__init__.pyc"])["x"] == 42
    assert int.from_bytes(compiled["pkg/__init__.pyc"][4:8], "little") == 0  # timestamp pyc: no source to check
    assert capsys.readouterr().out.startswith(f"magic {importlib.util.MAGIC_NUMBER.hex()}")


SOURCE_WITH_DOCSTRINGS = '''"""The module's docstring."""
from __future__ import annotations


class Kept:
    """The class's docstring."""

    def method(self):
        """The method's docstring."""
        return "m"


def only_a_docstring():
    """Nothing but this."""


async def waits():
    """An async function's."""
    x = "a string that is not a docstring"
    return x


def fails():
    """Its line numbers stay."""
    raise ValueError("line 25")


def checks(x):
    """Asserts stay."""
    assert x, "asserted"
'''


def test_the_wheels_bytecode_leaves_docstrings_out_and_keeps_asserts_and_line_numbers(tmp_path):
    """As `python -OO` does for docstrings (every heap is smaller), but asserts stay."""
    import asyncio  # noqa: PLC0415
    import traceback  # noqa: PLC0415

    ns = _run(_compile(tmp_path, {"pkg/m.py": SOURCE_WITH_DOCSTRINGS}, keep_source=False)["pkg/m.pyc"])
    assert ns.get("__doc__") is None and ns["Kept"].__doc__ is None and ns["Kept"].method.__doc__ is None
    assert ns["only_a_docstring"].__doc__ is None and ns["only_a_docstring"]() is None
    assert ns["waits"].__doc__ is None and asyncio.run(ns["waits"]()) == "a string that is not a docstring"
    assert ns["Kept"]().method() == "m"
    assert "annotations" in ns  # the __future__ import still comes first
    try:
        ns["fails"]()
    except ValueError as err:
        assert traceback.extract_tb(err.__traceback__)[-1].lineno == 25
    with pytest.raises(AssertionError, match="asserted"):
        ns["checks"](0)
    # the project's own bytecode keeps them, beside its source
    [kept] = _compile(tmp_path, {"pkg/m.py": SOURCE_WITH_DOCSTRINGS}, keep_source=True).values()
    assert _run(kept)["Kept"].__doc__ == "The class's docstring."


def test_the_project_keeps_its_source_beside_unchecked_hash_pycs(tmp_path):
    """So a traceback in the page still shows our lines."""
    compiled = _compile(tmp_path, {"sim/rules.py": "y = 1\n"}, keep_source=True)
    [(name, pyc)] = compiled.items()
    assert name == f"sim/__pycache__/rules.{sys.implementation.cache_tag}.pyc"
    assert int.from_bytes(pyc[4:8], "little") == 0b01  # hash-based, not checked against the source
    assert _run(pyc)["y"] == 1


def test_without_node_the_source_ships_and_build_info_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(bytecode, "find_node", lambda: None)
    wheels = {"app": tmp_path / "app.whl"}
    runtime, shipped, how = bytecode.compile_bytecode(tmp_path, wheels)
    assert (runtime, shipped) == (tmp_path, wheels)
    assert how == "none (no Node.js at build time): source shipped"


def test_lab_node_names_the_node_to_use_if_it_is_new_enough(tmp_path, monkeypatch):
    for version in ("16.20.2", "20.11.1"):
        fake = tmp_path / f"node-{version}"
        fake.write_text(f"#!/bin/sh\necho {version}\n")
        fake.chmod(0o755)
        monkeypatch.setenv("LAB_NODE", str(fake))
        found = bytecode.find_node()
        if version.startswith("16"):  # older than Pyodide 0.27 needs: the next candidate (or none)
            assert found is None or found[0] != str(fake)
        else:
            assert found == (str(fake), "20.11.1")


def test_a_bytecode_only_wheel_is_told_from_a_source_one(tmp_path):
    for name, members in {"pyc": ["m.pyc", "d.txt"], "src": ["m.py", "m.pyc"]}.items():
        with zipfile.ZipFile(tmp_path / f"{name}.whl", "w") as zf:
            for member in members:
                zf.writestr(member, "")
    assert bytecode.is_bytecode(tmp_path / "pyc.whl") and not bytecode.is_bytecode(tmp_path / "src.whl")
