"""zstd in frames: how Python's heap, the packages' bundle and the standard library ship (22%
less than gzip's bytes).

No browser decodes zstd natively, so the worker decodes it with zstd's own decoder compiled to
WebAssembly (pins.toml [zstddec], 54 kB of wasm; assets/zstd.js, the wasm written into it here).
gzip's window is 32 kB; zstd's reaches across the
heap's repeated structures: running-sum's heap, 90.4 MB raw, is 18.4 MB as gzip -6 and 14.4 MB
as these frames (SEARCH below).

A file is a zstd stream that any zstd reads (`zstd -d`): first a skippable frame (its magic
0x184D2A50) holding the index, [count: u32][(packed bytes, raw bytes): u32 pair] * count, all
little-endian; then `count` frames of at most FRAME raw bytes each, independent of each other,
so the worker decodes each one into its place as soon as its bytes are in, while the rest
download (assets/py-fetch.js: unzstdInto).
"""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path

from sitebuild import BuildError
from sitebuild.pins import PINS, fetch_npm

FRAME = 8 << 20  # raw bytes a frame: its window, and what the worker decodes at once
# How hard zstd searches (zstandard's parameters; the window is the frame): its optimal parser
# with short searches. Measured on running-sum's heap, one core: these 14.4 MB in 6.1 s; level
# 19's 13.8 MB took 15 s, and the build's seven heaps at level 19 made the gate (the build
# beside the unit tests on two cores) 108 s longer on a fresh machine; level 12: 15.2 MB, 1.8 s.
SEARCH = {"strategy": 7,  # zstd's btopt
           "search_log": 3, "min_match": 3, "target_length": 64, "hash_log": 20, "chain_log": 20}
# What every first visit downloads, packed once a build: level 19. Measured on the shared heap
# (62.8 MB): 11.73 MB in 14.7 s against SEARCH's 12.24 MB in 6.0 s (level 22: 11.73, 16.7 s);
# the build packs it beside the pages' runs on the other core.
HARDEST = {"level": 19}
SKIPPABLE = 0x184D2A50
DECODER = "assets/zstd.js"
# zstddec's script holds its wasm as one base64 string
DECODER_WASM = re.compile(r'\bconst wasm = "([A-Za-z0-9+/=]+)"')


def _frames(data: bytes, search: dict = SEARCH) -> list[tuple[bytes, int]]:
    """`data` as independent zstd frames of at most FRAME raw bytes: (frame, its raw bytes)."""
    import zstandard  # noqa: PLC0415 (build only: requirements/build.txt)

    level = search.get("level")
    params = (zstandard.ZstdCompressionParameters.from_level(level, window_log=23, write_content_size=True) if level
              else zstandard.ZstdCompressionParameters(window_log=23, write_content_size=True, **search))
    return [(zstandard.ZstdCompressor(compression_params=params).compress(data[at:at + FRAME]), min(FRAME, len(data) - at))
            for at in range(0, len(data), FRAME)]


def _file(frames: list[tuple[bytes, int]]) -> bytes:
    index = struct.pack(f"<I{2 * len(frames)}I", len(frames), *(n for frame, raw in frames for n in (len(frame), raw)))
    return struct.pack("<II", SKIPPABLE, len(index)) + index + b"".join(frame for frame, _ in frames)


def compress(data: bytes) -> bytes:
    """`data` as zstd in frames (the module's docstring says how)."""
    return _file(_frames(data))


def compress_parts(data: bytes, limit: int, search: dict = SEARCH) -> list[tuple[bytes, int]]:
    """`data` as files of `compress`'s layout, each of whole frames and at most `limit` bytes
    (or one frame), one after the other: (file, the raw bytes it holds)."""
    parts: list[list[tuple[bytes, int]]] = [[]]
    for frame in _frames(data, search):
        if parts[-1] and len(_file([*parts[-1], frame])) > limit:
            parts.append([])
        parts[-1].append(frame)
    return [(_file(frames), sum(raw for _, raw in frames)) for frames in parts]


def write(src: Path, dest: Path) -> None:
    """dest: src's bytes as zstd in frames; src is removed."""
    dest.write_bytes(compress(src.read_bytes()))
    src.unlink()


def decompress(packed: bytes) -> bytes:
    """The bytes a file of `compress` holds, checked against its index (for the build's tests)."""
    import zstandard  # noqa: PLC0415

    magic, size = struct.unpack_from("<II", packed)
    if magic != SKIPPABLE:
        raise BuildError("zstd frames: no index first")
    count = struct.unpack_from("<I", packed, 8)[0]
    pairs = struct.unpack_from(f"<{2 * count}I", packed, 12)
    at, out = 8 + size, []
    for packed_bytes, raw_bytes in zip(pairs[::2], pairs[1::2]):
        raw = zstandard.ZstdDecompressor().decompress(packed[at:at + packed_bytes])
        if len(raw) != raw_bytes:
            raise BuildError(f"zstd frames: a frame holds {len(raw)} bytes, its index says {raw_bytes}")
        out.append(raw)
        at += packed_bytes
    if at != len(packed):
        raise BuildError(f"zstd frames: {len(packed) - at} bytes after the last frame")
    return b"".join(out)


def raw_length(path: Path) -> int:
    """The bytes a file of `compress` holds, from its index alone."""
    with path.open("rb") as f:
        magic, size = struct.unpack("<II", f.read(8))
        if magic != SKIPPABLE:
            raise BuildError(f"{path.name}: zstd frames with no index first")
        index = f.read(size)
    count = struct.unpack_from("<I", index)[0]
    return sum(struct.unpack_from(f"<{2 * count}I", index, 4)[1::2])


def write_decoder(out: Path) -> None:
    """out/assets/zstd.js (copied there from assets/): zstd's decoder in WebAssembly, from
    zstddec's pinned tarball, written at its head as `labZstdWasm` (base64), which it reads."""
    import tarfile  # noqa: PLC0415

    pin = PINS["zstddec"]
    with tarfile.open(fetch_npm(pin, "zstddec")) as tar:
        script = tar.extractfile("package/dist/zstddec.mjs").read().decode()
    found = DECODER_WASM.findall(script)
    if len(found) != 1 or not base64.b64decode(found[0]).startswith(b"\0asm"):
        raise BuildError(f"zstddec {pin['version']}: not one wasm in its dist/zstddec.mjs "
                         f"({len(found)} found): the decoder cannot be written")
    path = out / DECODER
    path.write_text(f"// zstd's decoder in WebAssembly, from zstddec {pin['version']} on npm (MIT AND "
                    "BSD-3-Clause: Copyright (c) 2020 Don McCurdy; Copyright (c) "
                    "2016-present, Yann Collet, Facebook, Inc.), written in by sitebuild/zstd.py\n"
                    f'globalThis.labZstdWasm = "{found[0]}";\n' + path.read_text())
