"""Snapshot: Python's memory, saved after the imports and the page, so a page's worker starts there.

Pyodide starts in Node from the files the site ships, writes the packages from one bundle into
its file system, loads numpy's compiled modules in one fixed order into a function table padded
to a fixed base (assets/py-snapshot.js, the same code the worker restores with), and imports
numpy, Bokeh, Panel, sim and ui: that heap is shared by every page. Each page's run restores
it as a worker does, then makes the page with its default settings and its document
(ui.worker.premake: the worker adopts them instead of making them); of its heap the site ships
only the blocks that differ from the shared one (make_delta). Both are XORed with the wasm's
memory as instantiated (xor_before): the bytes the heap still holds of the wasm's data ship as
zeros. Two runs of the imports differ in where much of their memory lies (measured: 18 of 63
MB, now and then), so a page's run starts from the very bytes the site ships. The files ship as zstd in frames (sitebuild/zstd.py; the
worker decodes each frame as it arrives, whatever the host compresses): the bundle, which
replaces installing the wheels, the shared heap and each page's changes.

Without Node.js 18+ the site ships no snapshot, and every page starts Python the normal way.
"""

from __future__ import annotations

import collections
import concurrent.futures
import json
import os
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from sitebuild import ROOT, BuildError, log, sha256, zstd
from sitebuild.bytecode import find_node
from sitebuild.wheels import resolve

BUNDLE = "lab-packages.bin.zst"
# The bundle's files the restore does not open (every one but numpy's compiled modules and the
# packages' metadata, which Pyodide reads as it starts): shipped apart, fetched once the page is
# live, and read from the start through a blocking request if Python opens one before
# (assets/py-snapshot.js lazyFile). Measured on this build: 8.4 of 16.4 MB raw, 2.2 of 3.6 MB zstd;
# no page opened one on its way to live, nor in a session of settings changed.
LATER = "lab-packages-later.bin.zst"
HEAP_PREFIX = "lab-snapshot"  # the shared heap lab-snapshot.<n>.bin.zst, a page's changes lab-snapshot-<slug>.bin.zst
# The shared heap ships in parts of at most this many bytes (whole zstd frames each): Chromium's
# cache in memory (a private window's, Playwright's) keeps no response over 1/8 of its 50 MB, so a
# 12 MB heap in one file was fetched again by the next page (measured), the wasm's 3.2 MB was not.
PART_BYTES = 5_000_000
# Bytes a block of a page's changes to the shared heap (make_delta). Measured on gates' heap
# (75 MB, 3.3 MB of it changed by making the page): blocks of 4 kB, 4.0 MB zstd; 256 B, 1.6 MB;
# 64 B, 1.26 MB (its map of changed blocks 9 kB); 32 B, 1.18 MB.
BLOCK = 64
# Entries added to the function table's length in Node before numpy's modules load: Chromium's
# table holds one entry more than Node's there (measured); a browser whose table is longer than
# the base starts Python the normal way.
TABLE_MARGIN = 64

# What the snapshot holds imported. Everything a page imports on the way to its first object
# (its entry script only adds that page's class).
IMPORTS = """
import ui.panel_private
ui.panel_private.prepare_pyodide()
import numpy, param, bokeh, panel
import panel.io.pyodide
import sim, sim.family
import ui.app, ui.worker, ui.pages
from ui.pages import PAGES
for page in PAGES:
    __import__(f"ui.pages.{page.module}")
# What building a page imports on first use (found by diffing sys.modules after building each
# page): Panel's Markdown parser and its plugins, numpy's random generators, Panel's location.
import markdown_it, markdown_it.renderer, mdit_py_plugins.anchors, mdit_py_plugins.deflist
import mdit_py_plugins.footnote, mdit_py_plugins.tasklists, linkify_it
import numpy.random, numpy.ma, secrets
import panel.io.location
"""
# A page's run then makes the page as the build embeds it (ui.worker.premake, given the digest of
# the ids of the document made in CPython; left out if its ids differ). Each run ends with the
# random states fixed, so the same sources make the same snapshot (each visit reseeds).
PREMAKE = """
import json, ui.worker
_lab_report = json.dumps(ui.worker.premake({expected!r}))
"""
# Memory freed while the heap was made still holds what was there: random-features' run draws
# about 16 MB of random numbers on the way (peak in CPython), which no compressor can shrink.
# Blocks of zeros are taken, 64 kB ones first, then smaller, each size until the allocator asks
# the system for more (its break moves: every free stretch that size or more has been taken),
# then let go: the heap ships those bytes as zeros, and it has not grown for them. Measured on
# the shared heap: of 6.2 MB free, blocks of 64 kB alone took 1.5 MB (the rest is in smaller
# stretches); down to 1 kB, 5.9 MB.
ZERO_FREE = """
import gc, pyodide_js
gc.collect()
_top, _held = pyodide_js._module._sbrk, []
for _size in (1 << 16, 1 << 14, 1 << 12, 1 << 10):
    _start = _top(0)
    while _top(0) == _start and len(_held) < 1 << 16:
        _held.append(bytearray(_size - 64))
del _held, _top, _start, _size
gc.collect()
"""
SEEDS = """
import random
random.seed(0)
numpy.random.seed(0)
"""


def snapshot_code(expected: dict[str, str] | None = None) -> str:
    """What the snapshot's Python runs before its heap is saved: the imports, the free memory
    zeroed, the seeds fixed (the shared heap); with `expected` (slug -> digest of the ids of the
    document built ahead of time), restored from the shared heap: those pages made, and the same."""
    return IMPORTS + ZERO_FREE + SEEDS if expected is None else PREMAKE.format(expected=dict(expected)) + ZERO_FREE + SEEDS


# Files of the wheels the restored Python never opens, left out of the bundle (the heap already
# holds what they would give): the modules imported into the snapshot (their .pyc and .py: a
# module in sys.modules is not read again), type stubs, TypeScript and C sources, and a wheel's
# .data directory (xyzservices' providers, a second copy of its package data). Measured on this
# build: 30.9 -> 18.2 MB raw, 9.3 -> 5.3 MB gzip, 2,071 -> 1,081 files. Every directory stays, so
# a package's path is there for whatever it lists or finds later.
NEVER_OPENED = (".pyi", ".ts", ".h", ".pxd", ".a", ".c")


# numpy's compiled modules no heap imports (numpy imports numpy.fft only when it is used; its
# test modules and lapack_lite nothing of ours imports): not loaded before the restore, they are
# later files, loaded if Python imports one after all (Emscripten's dlopen reads the file then).
# The restore compiles 12 modules instead of 19; the bundle, 1.44 -> 1.33 MB zstd. A run whose
# heap imported one fails the snapshot step (the restore would not have it).
UNLOADED = ("numpy/fft/", "numpy/linalg/lapack_lite.", "numpy/_core/_rational_tests.", "numpy/_core/_umath_tests.",
            "numpy/_core/_struct_ufunc_tests.", "numpy/_core/_operand_flag_tests.", "numpy/_core/_simd.")


def preloaded(path: str) -> bool:
    """Whether this file of a wheel is a compiled module loaded before every restore."""
    return path.endswith(".so") and not path.startswith(UNLOADED)


def opened_after_restore(path: str, imported: frozenset[str]) -> bool:
    """Whether the restored Python may still open this file of a wheel (paths relative to
    site-packages; `imported`: the files of the modules the snapshot holds)."""
    if path.endswith(".so"):  # loaded before every restore, or when imported
        return True
    return path not in imported and not path.endswith(NEVER_OPENED) and not path.split("/")[0].endswith(".data")


def needed_to_restore(path: str) -> bool:
    """Whether the restore opens this file of a wheel: numpy's compiled modules loaded before
    it (preloaded) and the packages' metadata (read by Pyodide as it starts)."""
    return preloaded(path) or ".dist-info/" in path


def write_bundle(wheels: list[Path], dest: Path, imported: frozenset[str] = frozenset(),
                 later: Path | None = None) -> dict:
    """One file holding every file the wheels install (site-packages) that the restored Python
    may open (`opened_after_restore`), and every directory; numpy's compiled modules listed in
    the order they load; its format is in assets/py-snapshot.js. With `later`: the files the
    restore does not open (`needed_to_restore`) are listed in it and written to `later`, their
    bytes one after the other."""
    files: list[tuple[str, bytes]] = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            files += [(i.filename, z.read(i)) for i in z.infolist() if not i.is_dir()]
    paths = [p for p, _ in files]
    twice = sorted(p for p, n in collections.Counter(paths).items() if n > 1)
    if twice:
        raise BuildError(f"snapshot: two wheels install the same file: {', '.join(twice)}")
    dirs = sorted({p.rsplit("/", 1)[0] for p in paths if "/" in p and not p.split("/")[0].endswith(".data")})
    files = [(p, b) for p, b in files if opened_after_restore(p, imported)]
    dynlibs = sorted(p for p, _ in files if preloaded(p))
    lazy = [(p, b) for p, b in files if later is not None and not needed_to_restore(p)]
    now = [(p, b) for p, b in files if later is None or needed_to_restore(p)]
    head = {"files": [[p, len(b)] for p, b in now], "dynlibs": dynlibs, "dirs": dirs}
    if later is not None:
        head["later"] = [[p, len(b)] for p, b in lazy]
        later.write_bytes(b"".join(b for _, b in lazy))
    header = json.dumps(head).encode()
    raw = struct.pack("<I", len(header)) + header + b"".join(b for _, b in now)
    dest.write_bytes(raw)
    return {"files": len(files), "dynlibs": len(dynlibs), "bytes": len(raw), "left_out": len(paths) - len(files),
            "later_files": len(lazy), "later_bytes": sum(len(b) for _, b in lazy)}


def heap_name(slug: str | None = None, part: int = 1) -> str:
    """The file of the page's changes to the shared heap, or (no slug) of a part of the shared
    heap (from 1), in pyodide/."""
    return f"{HEAP_PREFIX}.{part}.bin.zst" if slug is None else f"{HEAP_PREFIX}-{slug}.bin.zst"


def make_delta(shared: bytes, heap: bytes, block: int = BLOCK) -> bytes:
    """What a page's heap changes of the shared one, in blocks of `block` bytes (the shared
    heap as if zeros beyond its end; the last block as far as the heap goes): [block: u32][the
    heap's length: u32][one bit a block, set where it changed, the first block in the lowest
    bit][the changed blocks, in order], all little-endian. assets/py-snapshot.js applyDelta
    reads it."""
    import numpy as np  # noqa: PLC0415 (the build's Python has it: the pages are rendered with sim)

    if len(heap) < len(shared):
        raise BuildError(f"snapshot: a page's heap of {len(heap)} bytes against a shared one of {len(shared)}")
    count = -(-len(heap) // block)
    old, new = np.zeros(count * block, np.uint8), np.zeros(count * block, np.uint8)
    old[:len(shared)] = np.frombuffer(shared, np.uint8)
    new[:len(heap)] = np.frombuffer(heap, np.uint8)
    changed = (old.reshape(-1, block) != new.reshape(-1, block)).any(axis=1)
    body = new.reshape(-1, block)[changed].tobytes()
    if changed[-1]:  # the last block as far as the heap goes
        body = body[:len(body) - (count * block - len(heap))]
    return struct.pack("<II", block, len(heap)) + np.packbits(changed, bitorder="little").tobytes() + body


def xor_before(heap: bytes, before: bytes) -> bytes:
    """`heap` with the first len(`before`) bytes of its memory XORed with `before`: the wasm's
    memory as its instantiation left it, before any code ran (its data; sitebuild/snapshot.js
    writes it). The heap still holds most of those bytes as they were (measured: 2.86 of their
    2.93 MB not zero), and XORed they are zeros: the shared heap packs to 1.1 MB less. The
    worker XORs them back with the same bytes of its own (py-snapshot.js xorBefore); the same
    function undoes itself. Not the memory as the restore finds it (numpy's modules' data too,
    0.15 MB more): Chromium's Pyodide has written a word of its own there by then (measured)."""
    import numpy as np  # noqa: PLC0415

    at = struct.unpack_from("<I", heap, 4)[0]  # the memory, after Pyodide's header (magic, its length, ...)
    if len(before) % 4 or at % 4 or at + len(before) > len(heap):
        raise BuildError(f"snapshot: {len(before)} bytes of the wasm's memory as instantiated against a heap of "
                         f"{len(heap)} whose memory starts at {at}")
    out = np.frombuffer(heap, np.uint8).copy()
    out[at:at + len(before)] ^= np.frombuffer(before, np.uint8)
    return out.tobytes()


def before_sums(before: bytes) -> list[int]:
    """Two sums of `before`'s little-endian 32-bit words, each modulo 2^32: of the words, and of
    each word times its place from 1. The worker checks its memory by them before it XORs
    (py-snapshot.js sums)."""
    import numpy as np  # noqa: PLC0415

    words = np.frombuffer(before, "<u4").astype(np.uint64)  # sums wrap modulo 2^64, so modulo 2^32 too
    places = np.arange(1, len(words) + 1, dtype=np.uint64)
    return [int(words.sum()) % (1 << 32), int((words * places).sum()) % (1 << 32)]


def apply_delta(shared: bytes, delta: bytes) -> bytes:
    """The page's heap: `shared` with the changes of make_delta (the reference the worker's
    applyDelta is tested against)."""
    block, length = struct.unpack_from("<II", delta)
    count = -(-length // block)
    bits = delta[8:8 + (count + 7) // 8]
    heap = bytearray(length)
    heap[:len(shared)] = shared
    at = 8 + len(bits)
    for i in range(count):
        if bits[i >> 3] >> (i & 7) & 1:
            n = min(block, length - i * block)
            heap[i * block:i * block + n] = delta[at:at + n]
            at += n
    if at != len(delta):
        raise BuildError(f"snapshot: {len(delta) - at} bytes after a page's changes")
    return bytes(heap)


def _make_heap(node: str, pyodide_dir: Path, raw_bundle: Path, slug: str | None, ids: str = "",
               shared: Path | None = None) -> dict:
    """One Node run: the imports (the shared heap), or, restored from the `shared` heap as a
    worker restores it, the page `slug` made (if its ids are `ids`); the heap written raw; what
    snapshot.js printed, or {"error": ...}."""
    from ui.worker import WORKER_ENV  # noqa: PLC0415 (Python's environment in the worker)

    raw_heap = pyodide_dir / heap_name(slug).removesuffix(".zst")
    env = {**os.environ, "LAB_SNAPSHOT_ENV": json.dumps(WORKER_ENV), **({"LAB_SNAPSHOT_FROM": str(shared)} if shared else {})}
    result = subprocess.run(
        [node, str(ROOT / "sitebuild" / "snapshot.js"), str(pyodide_dir) + "/", str(raw_bundle), str(raw_heap),
         str(TABLE_MARGIN), snapshot_code(None if slug is None else {slug: ids})],
        capture_output=True, text=True, env=env)
    before = Path(f"{raw_heap}.before")
    if result.returncode != 0:
        raw_heap.unlink(missing_ok=True)
        before.unlink(missing_ok=True)
        return {"error": result.stderr.strip()[-2000:]}
    made = json.loads(result.stdout.strip().splitlines()[-1])
    if late := sorted(p for p in made["imported"] if p.endswith(".so") and not preloaded(p)):
        raw_heap.unlink(missing_ok=True)
        before.unlink(missing_ok=True)
        return {"error": f"its heap imported {', '.join(late)}, which the restore does not load first "
                         "(sitebuild/snapshot.py UNLOADED)"}
    found = (json.loads(made["report"] or "null") or {}).get(slug)
    made = {**made, "raw": raw_heap, "found": found, "before": before.read_bytes()}
    before.unlink()
    return made


def _pack_shared(pyodide_dir: Path, raw: bytes) -> list[tuple[str, int]]:
    """The shared heap (XORed: xor_before) into pyodide/<heap_name(None, n)>, in parts
    (PART_BYTES), packed as hard as zstd packs (every first visit downloads it): [(path, raw bytes)]."""
    parts = []
    for n, (packed, raw_bytes) in enumerate(zstd.compress_parts(raw, PART_BYTES, zstd.HARDEST), 1):
        (pyodide_dir / heap_name(None, n)).write_bytes(packed)
        parts.append((f"pyodide/{heap_name(None, n)}", raw_bytes))
    return parts


def make_snapshot(out: Path, lock: dict, packages: list[str], ahead: dict[str, dict]) -> dict | None:
    """Write the bundle of `packages` (with their dependencies), the shared heap and each page's
    changes to it (`ahead`: slug -> sitebuild.pages.prerender_page's result) into out/pyodide,
    the page made in its heap where its document has the ids of the one embedded; return what
    build-info.json says of them (``for_page`` picks what a page's config says), or None (and
    say why) when no snapshot can be made.

    One shared heap and each page's changes, not a heap a page: a second page costs its changes
    (about 1.2 MB of zstd), not another whole heap (13 MB); and one heap for all pages made
    would carry every page's objects (measured: all seven, 18.7 -> 32.5 MB gzip)."""
    sys.path.insert(0, str(ROOT))
    node = find_node()
    if node is None:
        log("SNAPSHOT: none, no Node.js 18+ to make it (apt-get install nodejs); pages start Python the normal way")
        return None
    if not ahead:
        log("SNAPSHOT: none, no page to make one for")
        return None
    started = time.monotonic()
    pyodide_dir = out / "pyodide"
    wheels = [pyodide_dir / lock["packages"][n]["file_name"] for n in resolve(lock, packages)]
    raw_bundle = pyodide_dir / "lab-packages.bin"
    write_bundle(wheels, raw_bundle)
    made = {None: _make_heap(node[0], pyodide_dir, raw_bundle, None)}  # the shared heap first
    if "error" not in made[None]:
        shared_file, before = made[None]["raw"], made[None]["before"]  # the pages' runs restore the file
        shared_xored = xor_before(shared_file.read_bytes(), before)
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
            packing = pool.submit(_pack_shared, pyodide_dir, shared_xored)  # beside the pages' runs
            made.update(zip(ahead, pool.map(
                lambda slug: _make_heap(node[0], pyodide_dir, raw_bundle, slug, ahead[slug]["ids"], shared_file), ahead)))
            made[None]["parts"] = packing.result()
    failed = {slug or "shared": m["error"] for slug, m in made.items() if "error" in m}
    # every run found the same table and the same memory as instantiated, as a worker must
    if failed or len({(m["tableBase"], m["table"], m["before"]) for m in made.values()}) != 1:
        for heap in pyodide_dir.glob(f"{HEAP_PREFIX}*"):  # packed and raw
            heap.unlink()
        raw_bundle.unlink(missing_ok=True)
        log("SNAPSHOT: none, Node could not make it; pages start Python the normal way:\n"
            + ("\n".join(f"{slug}: {error}" for slug, error in failed.items())
               or "the runs' tables, or their memory as instantiated, differ"))
        return None
    shared = made.pop(None)
    for slug, m in made.items():
        if m["found"] != ahead[slug]["ids"]:
            log(f"SNAPSHOT: {slug}'s document made in Pyodide has other ids than the one built ahead of time "
                f"(sha256 {str(m['found'])[:12]} against {ahead[slug]['ids'][:12]}): not made in its heap; "
                "its worker makes the page (about two seconds more)")
    heaps = {}
    for slug, m in made.items():
        delta = make_delta(shared_xored, xor_before(m["raw"].read_bytes(), before))
        m["raw"].unlink()
        (pyodide_dir / heap_name(slug)).write_bytes(zstd.compress(delta))
        heaps[slug] = {"delta": f"pyodide/{heap_name(slug)}", "delta_bytes": len(delta), "heap_bytes": m["bytes"],
                       "delta_zstd_bytes": (pyodide_dir / heap_name(slug)).stat().st_size,
                       "delta_sha256": sha256(pyodide_dir / heap_name(slug)), "premade": m["found"] == ahead[slug]["ids"]}
    shared["raw"].unlink()
    # The shared heap holds the imported modules: the bundle the worker restores with leaves out
    # their files.
    imported = frozenset(shared["imported"])
    raw_later = pyodide_dir / LATER.removesuffix(".zst")
    bundle = write_bundle(wheels, raw_bundle, imported, raw_later)
    zstd.write(raw_bundle, pyodide_dir / BUNDLE)
    zstd.write(raw_later, pyodide_dir / LATER)
    info = {
        "bundle": f"pyodide/{BUNDLE}", "bundle_bytes": bundle["bytes"],
        "bundle_zstd_bytes": (pyodide_dir / BUNDLE).stat().st_size, "bundle_sha256": sha256(pyodide_dir / BUNDLE),
        "later": f"pyodide/{LATER}", "later_bytes": bundle["later_bytes"],
        "later_zstd_bytes": (pyodide_dir / LATER).stat().st_size, "later_sha256": sha256(pyodide_dir / LATER),
        "heap": [path for path, _ in shared["parts"]], "heap_parts": [raw for _, raw in shared["parts"]],
        "shared_bytes": shared["bytes"], "heap_zstd_bytes": sum((out / path).stat().st_size for path, _ in shared["parts"]),
        "heap_sha256": [sha256(out / path) for path, _ in shared["parts"]],
        "table_base": shared["tableBase"], "node_table": shared["table"],
        "before_bytes": len(before), "before_sums": before_sums(before),
        "files": bundle["files"], "dynlibs": bundle["dynlibs"], "heaps": heaps,
    }
    deltas = sorted(h["delta_zstd_bytes"] / 1e6 for h in heaps.values())
    grown = sorted(h["heap_bytes"] / 1e6 for h in heaps.values())
    log(f"snapshot: one shared heap, {shared['bytes'] / 1e6:.1f} MB ({info['heap_zstd_bytes'] / 1e6:.1f} MB zstd "
        f"in {len(shared['parts'])} parts); "
        f"each page's changes {deltas[0]:.2f}-{deltas[-1]:.2f} MB zstd, its heap {grown[0]:.1f}-{grown[-1]:.1f} MB, "
        f"its page made in it: {sum(h['premade'] for h in heaps.values())} of {len(heaps)}; "
        f"packages {bundle['bytes'] / 1e6:.1f} MB ({info['bundle_zstd_bytes'] / 1e6:.1f} MB zstd, "
        f"{bundle['files']} files, {bundle['left_out']} left out; of them {bundle['later_files']} later, "
        f"{bundle['later_bytes'] / 1e6:.1f} MB, {info['later_zstd_bytes'] / 1e6:.1f} MB zstd), table base {shared['tableBase']}, "
        f"made with Node {node[1]} in {time.monotonic() - started:.1f} s")
    return info


def for_page(info: dict | None, slug: str) -> dict | None:
    """What page `slug`'s config says of the snapshot: the shared bundle, table and heap, and its
    own changes to the heap (None: the page starts Python the normal way)."""
    if info is None or slug not in info["heaps"]:
        return None
    return {**{k: v for k, v in info.items() if k != "heaps"}, **info["heaps"][slug]}
