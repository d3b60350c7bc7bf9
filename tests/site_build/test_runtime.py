"""sitebuild.runtime: the Pyodide core from a (here made-up) npm tarball, and its files shipped."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile

import pytest

from sitebuild import BuildError, pins, runtime

FILES = ["pyodide.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]
LOCK = {"info": {"version": "0.27.7", "python": "3.12.7"}, "packages": {}}


def _npm_tarball(path, files: dict[str, bytes]) -> str:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


@pytest.fixture
def fake_pyodide(tmp_path, monkeypatch):
    """pins.toml's [pyodide] pointing at a small tarball (file://), and a cache of its own."""
    files = {"pyodide.js": b"// loader", "pyodide.asm.wasm": b"\0asm", "python_stdlib.zip": b"PK",
             "pyodide-lock.json": json.dumps(LOCK).encode(), "README.md": b"not shipped"}
    tarball = tmp_path / "pyodide.tgz"
    integrity = _npm_tarball(tarball, files)
    pin = {"version": "0.27.7", "tarball": tarball.as_uri(), "integrity": integrity, "files": FILES}
    monkeypatch.setitem(pins.PINS, "pyodide", pin)
    monkeypatch.setattr(pins, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(runtime, "CACHE", tmp_path / "cache")
    return pin


def test_the_runtime_is_verified_and_only_the_pinned_files_are_taken(fake_pyodide, tmp_path):
    folder, lock = runtime.fetch_runtime()
    assert sorted(p.name for p in folder.iterdir()) == sorted(FILES)
    assert lock == LOCK and (folder / "pyodide.asm.wasm").read_bytes() == b"\0asm"

    (tmp_path / "cache" / "downloads" / "pyodide-0.27.7.tgz").write_bytes(b"tampered")
    with pytest.raises(BuildError, match="pyodide-0.27.7.tgz: sha512 integrity"):
        runtime.fetch_runtime()


def test_each_shipped_runtime_file_says_where_it_came_from(fake_pyodide, tmp_path):
    npm, _ = runtime.fetch_runtime()
    compiled = tmp_path / "compiled"
    compiled.mkdir()
    for name in FILES:
        (compiled / name).write_bytes((npm / name).read_bytes())
    (compiled / "python_stdlib.zip").write_bytes(b"PK compiled")
    out = tmp_path / "site"
    sources = runtime.write_runtime(out, compiled, npm, "Pyodide itself")
    origin = fake_pyodide["tarball"].split("//")[1]
    assert sources == [{"file": "pyodide/pyodide.js", "from": origin},
                       {"file": "pyodide/pyodide.asm.wasm", "from": origin},
                       {"file": "pyodide/python_stdlib.zip", "from": f"{origin}, compiled to bytecode by Pyodide itself"}]
    assert (out / "pyodide" / "python_stdlib.zip").read_bytes() == b"PK compiled"
    assert not (out / "pyodide" / "pyodide-lock.json").exists()  # the site's own lock: wheels.write_wheels


def test_the_standard_library_ships_as_zstd_frames_and_decodes_to_what_it_was(tmp_path):
    from sitebuild import zstd  # noqa: PLC0415

    folder = tmp_path / "site" / "pyodide"
    folder.mkdir(parents=True)
    original = {"pyodide.asm.wasm": b"\0asm" + bytes(range(256)) * 50, "python_stdlib.zip": b"PK" + b"x" * 9000,
                "pyodide.js": b"// loader"}
    for name, data in original.items():
        (folder / name).write_bytes(data)
    sources = [{"file": f"pyodide/{name}", "from": "npm"} for name in original]
    runtime.pack_runtime(tmp_path / "site", sources)
    assert runtime.PACKED == ("python_stdlib.zip",)  # the wasm streams to its compile as it is
    assert sorted(p.name for p in folder.iterdir()) == ["pyodide.asm.wasm", "pyodide.js", "python_stdlib.zip.zst"]
    assert (folder / "pyodide.asm.wasm").read_bytes() == original["pyodide.asm.wasm"]
    for name in runtime.PACKED:
        packed = (folder / f"{name}.zst").read_bytes()
        assert zstd.decompress(packed) == original[name] and len(packed) < len(original[name])
        assert runtime.shipped_name(name) == f"{name}.zst"
    assert runtime.shipped_name("pyodide.js") == "pyodide.js"
    assert runtime.shipped_name("pyodide.asm.wasm") == "pyodide.asm.wasm"
    # the lengths the worker checks what it decodes against, read from each file's index
    assert runtime.packed_sizes(tmp_path / "site") == {name: len(original[name]) for name in runtime.PACKED}
    assert sources == [{"file": "pyodide/pyodide.asm.wasm", "from": "npm"},
                       {"file": "pyodide/python_stdlib.zip.zst", "from": "npm, zstd in frames"},
                       {"file": "pyodide/pyodide.js", "from": "npm"}]
