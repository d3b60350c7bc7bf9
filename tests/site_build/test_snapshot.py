"""sitebuild/snapshot.py: the package bundle (written in Python, read by assets/py-snapshot.js
in the worker and in Node), the imports. What the built site ships of the
snapshot is checked in tests/e2e/test_worker.py."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile

import pytest

from sitebuild import ROOT, snapshot

NODE = shutil.which("node") or shutil.which("nodejs")
READER = """
const snap = require(process.argv[1]);
const bytes = require("fs").readFileSync(process.argv[2]);
const { files, dynlibs, dirs, later, laterBytes } = snap.readBundle(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
console.log(JSON.stringify({ files: files.map(([p, b]) => [p, Buffer.from(b).toString("latin1")]), dynlibs, dirs, later, laterBytes }));
"""


def read_bundle(path) -> dict:
    """The bundle as assets/py-snapshot.js reads it, in Node."""
    read = subprocess.run([NODE, "-e", READER, str(ROOT / "assets" / "py-snapshot.js"), str(path)],
                          capture_output=True, text=True, check=True)
    return json.loads(read.stdout)


def wheel(path, members: dict[str, bytes]):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


@pytest.mark.skipif(NODE is None, reason="needs Node.js (make build installs it)")
def test_the_bundle_python_writes_is_what_the_worker_reads(tmp_path):
    a = wheel(tmp_path / "a-1-py3-none-any.whl", {"a/__init__.py": b"x = 1\n", "a/_c.so": b"\x00asm\x01",
                                                "a-1.dist-info/METADATA": b"Name: a\n"})
    b = wheel(tmp_path / "b-1-py3-none-any.whl", {"b/z.so": b"\x00asm\x02", "b/data/t.json": b'{"k": [1, 2]}'})
    info = snapshot.write_bundle([a, b], tmp_path / "bundle.bin")
    assert info == {"files": 5, "dynlibs": 2, "bytes": (tmp_path / "bundle.bin").stat().st_size, "left_out": 0,
                    "later_files": 0, "later_bytes": 0}
    got = read_bundle(tmp_path / "bundle.bin")
    assert (got["later"], got["laterBytes"]) == ([], 0)  # where the snapshot is made: every file at once
    assert dict(got["files"]) == {"a/__init__.py": "x = 1\n", "a/_c.so": "\x00asm\x01",
                                  "a-1.dist-info/METADATA": "Name: a\n", "b/z.so": "\x00asm\x02",
                                  "b/data/t.json": '{"k": [1, 2]}'}
    assert got["dynlibs"] == ["a/_c.so", "b/z.so"]  # one fixed order: the same where made and restored
    assert got["dirs"] == ["a", "a-1.dist-info", "b", "b/data"]


@pytest.mark.skipif(NODE is None, reason="needs Node.js (make build installs it)")
def test_the_bundle_leaves_out_what_the_restored_python_never_opens(tmp_path):
    """The modules the heap holds imported, stubs, C and TypeScript sources and a wheel's .data
    copy are left out; compiled modules, data files, metadata and every directory stay."""
    a = wheel(tmp_path / "a-1-py3-none-any.whl", {
        "a/__init__.pyc": b"imported", "a/lazy.pyc": b"not imported", "a/core/_m.so": b"\x00asm",
        "a/core/only.pyc": b"imported too", "a/__init__.pyi": b"stub", "a/src/x.ts": b"ts", "a/inc/x.h": b"h",
        "a/t/page.html": b"<p>", "a-1.dist-info/METADATA": b"Name: a\n", "a-1.data/data/share/p.json": b"{}"})
    imported = frozenset({"a/__init__.pyc", "a/core/only.pyc", "a/core/_m.so"})
    info = snapshot.write_bundle([a], tmp_path / "bundle.bin", imported)
    assert (info["files"], info["left_out"]) == (4, 6)
    got = read_bundle(tmp_path / "bundle.bin")
    assert sorted(p for p, _ in got["files"]) == ["a-1.dist-info/METADATA", "a/core/_m.so", "a/lazy.pyc", "a/t/page.html"]
    assert got["dynlibs"] == ["a/core/_m.so"]  # an imported compiled module still loads before the restore
    assert got["dirs"] == ["a", "a-1.dist-info", "a/core", "a/inc", "a/src", "a/t"]  # a .data copy is not installed


@pytest.mark.skipif(NODE is None, reason="needs Node.js (make build installs it)")
def test_the_files_the_restore_does_not_open_go_to_the_later_file_in_order(tmp_path):
    """With a later file: numpy's compiled modules and the packages' metadata stay in the
    bundle (the restore opens them); every other file is listed in the bundle's header, with
    its length, and its bytes are in the later file, one after the other, in that order."""
    a = wheel(tmp_path / "a-1-py3-none-any.whl", {
        "a/__init__.pyc": b"imported", "a/lazy.pyc": b"LAZY", "a/core/_m.so": b"\x00asm",
        "a/t/page.html": b"<p>hi</p>", "a-1.dist-info/METADATA": b"Name: a\n", "a-1.dist-info/RECORD": b"r"})
    info = snapshot.write_bundle([a], tmp_path / "bundle.bin", frozenset({"a/__init__.pyc"}), tmp_path / "later.bin")
    assert (info["files"], info["left_out"], info["later_files"], info["later_bytes"]) == (5, 1, 2, 13)
    got = read_bundle(tmp_path / "bundle.bin")
    assert sorted(p for p, _ in got["files"]) == ["a-1.dist-info/METADATA", "a-1.dist-info/RECORD", "a/core/_m.so"]
    assert got["later"] == [["a/lazy.pyc", 0, 4], ["a/t/page.html", 4, 9]]  # [path, offset, length]
    assert got["laterBytes"] == 13 and (tmp_path / "later.bin").read_bytes() == b"LAZY<p>hi</p>"
    assert got["dynlibs"] == ["a/core/_m.so"]
    assert "a/t" in got["dirs"]  # a later file's directory is made with the others


@pytest.mark.skipif(NODE is None, reason="needs Node.js (make build installs it)")
def test_numpys_modules_no_heap_imports_are_later_files_not_loaded_before_the_restore(tmp_path):
    n = wheel(tmp_path / "numpy-2-cp312-wasm32.whl", {
        "numpy/_core/_multiarray_umath.so": b"\x00asm\x01", "numpy/fft/_pocketfft_umath.so": b"\x00asm\x02",
        "numpy/_core/_simd.so": b"\x00asm\x03", "numpy/linalg/lapack_lite.so": b"\x00asm\x04",
        "numpy/linalg/_umath_linalg.so": b"\x00asm\x05"})
    snapshot.write_bundle([n], tmp_path / "bundle.bin", frozenset(), tmp_path / "later.bin")
    got = read_bundle(tmp_path / "bundle.bin")
    assert got["dynlibs"] == ["numpy/_core/_multiarray_umath.so", "numpy/linalg/_umath_linalg.so"]
    assert sorted(p for p, _ in got["files"]) == got["dynlibs"]
    assert sorted(p for p, _, _ in got["later"]) == [
        "numpy/_core/_simd.so", "numpy/fft/_pocketfft_umath.so", "numpy/linalg/lapack_lite.so"]
    assert not snapshot.preloaded("numpy/fft/_pocketfft_umath.cpython-312-wasm32-emscripten.so")
    assert snapshot.preloaded("numpy/random/_pcg64.cpython-312-wasm32-emscripten.so")
    assert not snapshot.preloaded("numpy/fft/_pocketfft.py")


def test_two_wheels_installing_one_file_are_refused(tmp_path):
    a = wheel(tmp_path / "a.whl", {"x/y.py": b"1"})
    b = wheel(tmp_path / "b.whl", {"x/y.py": b"2"})
    with pytest.raises(SystemExit, match="two wheels install the same file: x/y.py"):
        snapshot.write_bundle([a, b], tmp_path / "bundle.bin")


def test_the_snapshot_imports_what_a_page_imports_before_its_own_class():
    code = snapshot.IMPORTS
    # Panel's jsnull stand-in comes before Panel itself
    assert code.index("prepare_pyodide()") < code.index("import numpy, param, bokeh, panel")
    for module in ("ui.worker", "ui.app", "sim", "panel.io.pyodide", "markdown_it"):
        assert re.search(rf"\bimport .*\b{re.escape(module)}\b", code), module


def test_a_pages_heap_ships_as_the_blocks_it_changed_of_the_shared_one():
    shared = bytes(range(256)) * 2  # 512 bytes: blocks of 64, 8 of them
    heap = bytearray(shared) + bytearray(128)  # the page's heap grew by two blocks
    heap[70] = 0xAA  # block 1
    heap[511] = 0  # block 7
    heap[600] = 1  # block 9, beyond the shared heap's end (zeros there)
    delta = snapshot.make_delta(shared, bytes(heap), block=64)
    # [64][640][bits of blocks 0-7: 1 and 7 set; of blocks 8-9: 9 set][the three blocks]
    assert delta[:8] == (64).to_bytes(4, "little") + (640).to_bytes(4, "little")
    assert delta[8:10] == bytes([0b10000010, 0b00000010])
    assert delta[10:] == bytes(heap[64:128]) + bytes(heap[448:512]) + bytes(heap[576:640])
    assert snapshot.apply_delta(shared, delta) == bytes(heap)
    assert snapshot.make_delta(shared, shared, block=64) == (64).to_bytes(4, "little") + (512).to_bytes(4, "little") + bytes(1)


def test_a_heap_smaller_than_the_shared_one_is_refused():
    with pytest.raises(SystemExit, match="a page's heap of 64 bytes against a shared one of 128"):
        snapshot.make_delta(bytes(128), bytes(64), block=64)


def test_a_heap_not_in_whole_blocks_ships_its_last_block_as_far_as_it_goes():
    shared = bytes(100)
    heap = bytes(99) + b"\x05" + b"\x07" * 10  # 110 bytes: block 1 (64-109) changed, 46 bytes of it
    delta = snapshot.make_delta(shared, heap, block=64)
    assert delta == (64).to_bytes(4, "little") + (110).to_bytes(4, "little") + bytes([0b10]) + heap[64:]
    assert snapshot.apply_delta(shared, delta) == heap


APPLY = """
const snap = require(process.argv[1]);
const fs = require("fs");
const [shared, delta] = [fs.readFileSync(process.argv[2]), fs.readFileSync(process.argv[3])];
const heap = new Uint8Array(Number(process.argv[4]));
heap.set(shared);
try {
  snap.applyDelta(heap, new Uint8Array(delta.buffer, delta.byteOffset, delta.length));
  process.stdout.write(Buffer.from(heap).toString("hex"));
} catch (err) { process.stdout.write("error: " + err.message); }
"""


def apply_in_node(tmp_path, shared: bytes, delta: bytes, length: int) -> str:
    (tmp_path / "shared").write_bytes(shared)
    (tmp_path / "delta").write_bytes(delta)
    run = subprocess.run([NODE, "-e", APPLY, str(ROOT / "assets" / "py-snapshot.js"), str(tmp_path / "shared"),
                          str(tmp_path / "delta"), str(length)], capture_output=True, text=True, check=True)
    return run.stdout


@pytest.mark.skipif(NODE is None, reason="needs Node.js (make build installs it)")
def test_the_worker_applies_a_pages_changes_as_python_wrote_them(tmp_path):
    import random

    rng = random.Random(7)
    shared = bytes(rng.randrange(256) for _ in range(64 * 40))
    heap = bytearray(shared) + bytearray(64 * 8 + 21)
    # runs of changed blocks across byte boundaries of the map, single ones, the last (21 bytes)
    heap[-1] = 9
    for block in (0, 1, 2, 7, 8, 9, 10, 16, 23, 24, 31, 33, 45, 47):
        heap[block * 64 + rng.randrange(64)] ^= 0xFF
    delta = snapshot.make_delta(shared, bytes(heap), block=64)
    assert apply_in_node(tmp_path, shared, delta, len(heap)) == bytes(heap).hex()
    assert apply_in_node(tmp_path, shared, delta, len(heap) + 64) == (
        f"error: a page's heap changes: for {len(heap)} bytes, not {len(heap) + 64}")
    assert apply_in_node(tmp_path, shared, delta + b"x", len(heap)) == "error: a page's heap changes: 1 bytes left over"


def heap_with_memory(memory: bytes) -> bytes:
    """A heap as Pyodide writes one: [magic][header length 16][...] then the memory."""
    return (0x706E7300).to_bytes(4, "little") + (16).to_bytes(4, "little") + bytes(8) + memory


def test_a_heap_is_xored_with_the_memory_as_instantiated_and_back():
    before = bytes([0, 0, 0, 0, 1, 2, 3, 4])
    heap = heap_with_memory(bytes([9, 9, 9, 9, 1, 2, 3, 5, 7, 7]))
    xored = snapshot.xor_before(heap, before)
    # the header as it was; the memory's first 8 bytes XORed (equal bytes to zeros), the rest as it was
    assert xored == heap[:16] + bytes([9, 9, 9, 9, 0, 0, 0, 1, 7, 7])
    assert snapshot.xor_before(xored, before) == heap


def test_a_memory_not_in_words_or_longer_than_the_heaps_is_refused():
    with pytest.raises(SystemExit, match="6 bytes of the wasm's memory as instantiated against a heap of 24"):
        snapshot.xor_before(heap_with_memory(bytes(8)), bytes(6))
    with pytest.raises(SystemExit, match="12 bytes of the wasm's memory as instantiated against a heap of 24"):
        snapshot.xor_before(heap_with_memory(bytes(8)), bytes(12))


def test_the_sums_of_the_memory_wrap_at_two_to_the_32():
    words = [1, 2, 0xFFFFFFFF]
    data = b"".join(w.to_bytes(4, "little") for w in words)
    # 1 + 2 + (2^32 - 1) = 2 (mod 2^32); 1*1 + 2*2 + 3*(2^32 - 1) = 5 - 3 = 2 (mod 2^32)
    assert snapshot.before_sums(data) == [2, 2]
    assert snapshot.before_sums(bytes(0)) == [0, 0]
    assert snapshot.before_sums((7).to_bytes(4, "little") + bytes(4)) == [7, 7]


XOR = """
const snap = require(process.argv[1]);
const fs = require("fs");
const heap = new Uint8Array(fs.readFileSync(process.argv[2]));
const memory = new Uint8Array(fs.readFileSync(process.argv[3]));
const sums = JSON.parse(process.argv[4]);
try {
  snap.xorBefore(heap, memory, memory.length, sums);
  process.stdout.write(JSON.stringify({ heap: Buffer.from(heap).toString("hex"),
    sums: snap.sums(new Uint32Array(memory.buffer, memory.byteOffset, memory.length / 4)) }));
} catch (err) {
  process.stdout.write(JSON.stringify({ error: err.message, heap: Buffer.from(heap).toString("hex") }));
}
"""


def xor_in_node(tmp_path, heap: bytes, memory: bytes, sums: list[int]) -> dict:
    (tmp_path / "heap").write_bytes(heap)
    (tmp_path / "memory").write_bytes(memory)
    run = subprocess.run([NODE, "-e", XOR, str(ROOT / "assets" / "py-snapshot.js"), str(tmp_path / "heap"),
                          str(tmp_path / "memory"), json.dumps(sums)], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


@pytest.mark.skipif(NODE is None, reason="needs Node.js (make build installs it)")
def test_the_worker_xors_the_heap_back_as_python_xored_it(tmp_path):
    import random

    rng = random.Random(11)
    memory = bytes(rng.randrange(256) for _ in range(4 * 300))
    heap = heap_with_memory(bytes(rng.randrange(256) for _ in range(4 * 400)))
    xored = snapshot.xor_before(heap, memory)
    sums = snapshot.before_sums(memory)
    done = xor_in_node(tmp_path, xored, memory, sums)
    assert done == {"heap": heap.hex(), "sums": sums}
    # memory other than the build's: refused, and the heap's magic number cleared (Pyodide refuses it at once)
    other = memory[:-1] + bytes([memory[-1] ^ 1])
    refused = xor_in_node(tmp_path, xored, other, sums)
    assert refused["error"] == ("the wasm's memory as instantiated is not the one the heap was made against "
                                f"(sums {','.join(map(str, snapshot.before_sums(other)))}, not {sums[0]},{sums[1]})")
    assert refused["heap"] == (bytes(4) + xored[4:]).hex()
    # a build that XORed nothing: the heap as it is
    assert xor_in_node(tmp_path, heap, b"", [0, 0])["heap"] == heap.hex()


SPARSE = """
const snap = require(process.argv[1]);
const calls = [];
class Memory extends Int8Array { set(bytes, at = 0) { calls.push([at, bytes.length]); super.set(bytes, at); } }
const page = 4096, memory = new Memory(8 * page);
memory[2 * page + 5] = 7;  // written at start-up: the heap's zeros must go over it
const Module = { HEAP8: memory };
snap.skipZeroPages(Module);
const still = [Module.HEAP8.length, Module.HEAP8[2 * page + 5], Module.HEAP8.subarray(0, 2).length];
const heap = new Int8Array(7 * page);  // its pages 1, 3 and 4 not zeros; 0, 2, 5 and 6 zeros
heap[page] = 1; heap[3 * page + 100] = 2; heap[5 * page - 1] = 3;
Module.HEAP8.set(heap);
const after = Module.HEAP8 === memory;
const same = [...memory.subarray(0, 7 * page)].every((b, i) => b === heap[i]);
Module.HEAP8.set(heap.subarray(0, page), page);  // once only: the next write is whole
process.stdout.write(JSON.stringify({ still, calls, after, same }));
"""


@pytest.mark.skipif(NODE is None, reason="needs Node.js (make build installs it)")
def test_the_heaps_pages_of_zeros_are_not_written_where_the_memory_is_zeros_too():
    run = subprocess.run([NODE, "-e", SPARSE, str(ROOT / "assets" / "py-snapshot.js")], capture_output=True, text=True,
                         check=True)
    got = json.loads(run.stdout)
    page = 4096
    assert got["still"] == [8 * page, 7, 2]  # the memory's own length, values and methods meanwhile
    # written: pages 1-4 (page 2 is zeros in the heap, not in the memory), then the whole write after
    assert got["calls"] == [[page, 4 * page], [page, page]]
    assert got["after"] is True and got["same"] is True


ROUND_TRIP = """
const snap = require(process.argv[1]);
const converter = snap.deserialize("panel dict converter");
let refused = null;
try { snap.serialize(() => 1); } catch (err) { refused = err.message; }
process.stdout.write(JSON.stringify({ again: snap.serialize(converter), converted: converter([["a", undefined], ["b", 2]]), refused }));
"""


@pytest.mark.skipif(NODE is None, reason="needs Node.js (make build installs it)")
def test_panels_dict_converter_restored_is_kept_again_by_a_pages_run():
    """A page's run restores the shared heap (the converter made by deserialize) and makes a
    snapshot again: serialize must know the converter it restored."""
    run = subprocess.run([NODE, "-e", ROUND_TRIP, str(ROOT / "assets" / "py-snapshot.js")], capture_output=True,
                         text=True, check=True)
    assert json.loads(run.stdout) == {"again": "panel dict converter", "converted": {"a": None, "b": 2},
                                      "refused": "cannot keep this JavaScript value in the snapshot: () => 1"}


def test_a_pages_run_makes_the_page_on_the_shared_heap_and_zeroes_and_seeds_as_it_does():
    shared = snapshot.snapshot_code()
    page = snapshot.snapshot_code({"gates": "abc"})
    assert "import numpy, param, bokeh, panel" in shared and "premake" not in shared
    assert "premake({'gates': 'abc'})" in page and "import numpy, param, bokeh, panel" not in page
    for code in (shared, page):
        assert code.index("_sbrk") < code.index("random.seed(0)")
