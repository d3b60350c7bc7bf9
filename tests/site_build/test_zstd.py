"""sitebuild/zstd.py: the heaps' and the bundle's zstd frames. The layout the worker reads
(assets/py-fetch.js: unzstdInto, tested in tests/js/py-fetch.test.js) is checked here against
zstd itself: any zstd decoder reads the file whole (the index is a skippable frame), each frame
alone gives its stretch of bytes, and the index says where each one is."""

from __future__ import annotations

import io
import json
import shutil
import struct
import subprocess
import tarfile

import pytest
import zstandard

from sitebuild import ROOT, BuildError, zstd

NODE = shutil.which("node") or shutil.which("nodejs")

# 20 MB of repeated patterns, then zeros (3 frames: 8 + 8 + 4 MB)
DATA = (bytes(range(256)) * 4096 + struct.pack("<1000I", *range(1000)) * 300)[: 20 << 20]
DATA = DATA + bytes(20 * 2 ** 20 - len(DATA))


def index_of(packed: bytes) -> list[tuple[int, int]]:
    magic, size = struct.unpack_from("<II", packed)
    assert magic == 0x184D2A50
    count = struct.unpack_from("<I", packed, 8)[0]
    assert size == 4 + 8 * count
    pairs = struct.unpack_from(f"<{2 * count}I", packed, 12)
    return list(zip(pairs[::2], pairs[1::2]))


def test_the_frames_hold_the_bytes_in_frames_of_at_most_8_mb_each_readable_alone():
    packed = zstd.compress(DATA)
    index = index_of(packed)
    assert [raw for _, raw in index] == [8 << 20, 8 << 20, 4 << 20]
    at = 8 + 4 + 8 * len(index)
    for n, (size, raw) in enumerate(index):
        frame = packed[at:at + size]
        params = zstandard.get_frame_parameters(frame)
        assert params.content_size == raw  # the worker's decoder reads it (assets/zstd.js, with no place given)
        assert zstandard.ZstdDecompressor().decompress(frame) == DATA[n * (8 << 20):n * (8 << 20) + raw]
        at += size
    assert at == len(packed)
    assert len(packed) < len(DATA) / 50


def test_any_zstd_decoder_reads_the_whole_file_and_ours_checks_its_index():
    packed = zstd.compress(DATA)
    reader = zstandard.ZstdDecompressor().stream_reader(packed, read_across_frames=True)
    assert reader.read() == DATA  # the skippable index is skipped
    assert zstd.decompress(packed) == DATA
    with pytest.raises(BuildError, match="bytes after the last frame"):
        zstd.decompress(packed + b"x")
    with pytest.raises(BuildError, match="no index first"):
        zstd.decompress(packed[8:])


def test_writing_replaces_the_raw_file_and_is_reproducible(tmp_path):
    for name in ("one", "two"):
        (tmp_path / name).write_bytes(DATA[:3_000_000])
        zstd.write(tmp_path / name, tmp_path / f"{name}.zst")
        assert not (tmp_path / name).exists()
    assert (tmp_path / "one.zst").read_bytes() == (tmp_path / "two.zst").read_bytes()
    assert zstd.decompress((tmp_path / "one.zst").read_bytes()) == DATA[:3_000_000]


def test_parts_are_whole_frames_each_within_the_limit_and_read_back_in_order():
    data = bytes(range(256)) * 4096 * 3 + b"\x01" * 9_000_000  # 3 MB of a pattern, 9 MB of one byte
    one = zstd.compress(data)
    # a limit below any two frames' files: a part a frame (two frames of 8 MB at most)
    parts = zstd.compress_parts(data, 16)
    assert [raw for _, raw in parts] == [zstd.FRAME, len(data) - zstd.FRAME]
    assert b"".join(zstd.decompress(p) for p, _ in parts) == data
    # a limit the whole file fits in: one part, the same file as compress
    assert zstd.compress_parts(data, len(one)) == [(one, len(data))]
    assert all(len(p) <= 1_000 for p, _ in zstd.compress_parts(bytes(30_000_000), 1_000))


def test_the_hardest_packing_reads_back_the_same_and_is_no_larger():
    data = (bytes(range(256)) * 64 + bytes(7_000)) * 300
    hard = zstd.compress_parts(data, 10 << 20, zstd.HARDEST)
    assert len(hard) == 1 and zstd.decompress(hard[0][0]) == data
    assert len(hard[0][0]) <= len(zstd.compress(data))


def written_decoder(out):
    """out/assets/zstd.js as the build writes it: the source, copied, with its wasm written in."""
    (out / "assets").mkdir()
    shutil.copy(ROOT / zstd.DECODER, out / zstd.DECODER)
    zstd.write_decoder(out)


# The worker's decoder (assets/zstd.js, its wasm written in by write_decoder) in Node, over a file
# of frames as py-fetch.js reads it: the bytes decoded whole, a frame alone (into a place given,
# and as a new array), a corrupt frame, a frame too long for its place, and after its memory is
# let go.
DECODE = r"""
const fs = require("fs");
const [decoderPath, fetchPath, packedPath, rawLength, outPath] = process.argv.slice(1);
const zstd = require(decoderPath);
const { unzstdWhole } = require(fetchPath);
const packed = new Uint8Array(fs.readFileSync(packedPath));
const raw = unzstdWhole(packed, new Uint8Array(Number(rawLength)), zstd.decompress, "heap.zst");
fs.writeFileSync(outPath, raw);
const view = new DataView(packed.buffer);
const first = packed.subarray(8 + view.getUint32(4, true), 8 + view.getUint32(4, true) + view.getUint32(12, true));
const said = [];
const alone = zstd.decompress(first);
said.push(alone.length, alone.every((b, i) => b === raw[i]));
const place = new Uint8Array(alone.length + 5);
said.push(zstd.decompress(first, place), place.subarray(0, alone.length).every((b, i) => b === raw[i]));
for (const [frame, into] of [[first.slice(0, 1000), new Uint8Array(alone.length)], [first, new Uint8Array(10)]]) {
  try { zstd.decompress(frame, into); said.push("decoded"); } catch (err) { said.push(err.message); }
}
zstd.release();
said.push(zstd.decompress(first, new Uint8Array(alone.length)));
console.log(JSON.stringify(said));
"""


@pytest.mark.skipif(NODE is None, reason="needs Node.js (make build installs it)")
def test_the_workers_decoder_is_zstds_own_in_wasm_and_reads_every_frame(tmp_path):
    written_decoder(tmp_path)
    written = (tmp_path / zstd.DECODER).read_text()
    assert written.endswith((ROOT / zstd.DECODER).read_text())  # the source, the wasm in front
    assert "globalThis.labZstdWasm = " in written.splitlines()[1]
    (tmp_path / "heap.zst").write_bytes(zstd.compress(DATA))
    run = subprocess.run([NODE, "-e", DECODE, str(tmp_path / zstd.DECODER), str(ROOT / "assets" / "py-fetch.js"),
                          str(tmp_path / "heap.zst"), str(len(DATA)), str(tmp_path / "raw")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "raw").read_bytes() == DATA
    frame = 8 << 20
    assert json.loads(run.stdout) == [
        frame, True,  # a frame alone, as a new array: the size its header says
        frame, True,  # into a place with room to spare: how many bytes it wrote
        f"zstd: a corrupt frame, or one of more than {frame} bytes",  # cut short
        "zstd: a corrupt frame, or one of more than 10 bytes",  # longer than its place
        frame,  # its memory let go, a frame decodes the same
    ]


def test_a_zstddec_with_no_wasm_where_it_was_stops_the_build(tmp_path, monkeypatch):
    tarball = tmp_path / "zstddec.tgz"
    with tarfile.open(tarball, "w:gz") as tar:
        body = b'export const x = "no wasm here";'
        info = tarfile.TarInfo("package/dist/zstddec.mjs")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    monkeypatch.setattr(zstd, "fetch_npm", lambda pin, name: tarball)
    (tmp_path / "assets").mkdir()
    with pytest.raises(BuildError, match=r"zstddec .*: not one wasm in its dist/zstddec.mjs \(0 found\)"):
        zstd.write_decoder(tmp_path)


# zstd.js away: frames decoded in a worker of their own (here a stand-in for a Worker whose other
# side is the decoder's own serve(), in this process), its buffers sent back for the frames to
# come; and decoded here when that worker cannot start, fails with frames waiting, or leaves them
# waiting with no answer; a frame it says is corrupt is an error.
AWAY = r"""
const fs = require("fs");
const [decoderPath, packedPath] = process.argv.slice(1);
const zstd = require(decoderPath);
const packed = new Uint8Array(fs.readFileSync(packedPath));
const view = new DataView(packed.buffer);
const size = view.getUint32(4, true), count = view.getUint32(8, true);
const frames = [];
for (let i = 0, at = 8 + size, raw = 0; i < count; i++) {
  const p = view.getUint32(12 + 8 * i, true), r = view.getUint32(16 + 8 * i, true);
  frames.push([packed.subarray(at, at + p), r]);
  at += p;
}
const reused = [], started = [];
class Across {  // the worker's two sides: messages cloned or moved as postMessage does
  constructor(url, options) {
    started.push([url, options.name]);
    this.ended = false;
    globalThis.postMessage = (data, moved) => setImmediate(() => this.onmessage({ data: structuredClone(data, { transfer: moved }) }));
    zstd.serve();
  }
  postMessage(data, moved) {
    if (this.ended) return;
    if (data.reuse) reused.push(data.reuse.length);
    const sent = structuredClone(data, { transfer: moved });
    setImmediate(() => globalThis.onmessage({ data: sent }));
  }
  terminate() { this.ended = true; }
}
class Refused { constructor() { throw new Error("refused by the policy"); } }
class Failing {
  constructor() { setTimeout(() => this.onerror({ preventDefault() {} }), 5); }
  postMessage() {}
  terminate() {}
}
class Silent {  // starts, and never answers
  postMessage() {}
  terminate() { this.ended = true; }
}
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
(async () => {
  const said = {};
  for (const [name, Worker] of [["across", Across], ["refused", Refused], ["failing", Failing], ["silent", Silent]]) {
    const away = zstd.away("assets/zstd.js", Worker, name === "silent" ? 50 : 5000);
    const places = frames.map(([, r]) => new Uint8Array(r));
    const counts = await Promise.all(frames.map(([f], i) => away.decompress(f, places[i])));
    said[name] = { counts, same: places.every((p, i) => same(p, zstd.decompress(frames[i][0]))) };
    if (name === "across") {
      said.corrupt = await away.decompress(frames[0][0].slice(0, 100), new Uint8Array(frames[0][1])).then(() => "decoded", (e) => e.message);
    }
    away.close();
  }
  said.started = started;
  said.reused = reused;
  console.log(JSON.stringify(said));
})();
"""


@pytest.mark.skipif(NODE is None, reason="needs Node.js (make build installs it)")
def test_the_worker_start_decodes_in_a_worker_of_its_own_and_here_when_that_cannot_be(tmp_path):
    written_decoder(tmp_path)
    (tmp_path / "heap.zst").write_bytes(zstd.compress(DATA))  # frames of 8, 8 and 4 MB
    run = subprocess.run([NODE, "-e", AWAY, str(tmp_path / zstd.DECODER), str(tmp_path / "heap.zst")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    said = json.loads(run.stdout)
    counts = [8 << 20, 8 << 20, 4 << 20]
    for how in ("across", "refused", "failing", "silent"):
        assert said[how] == {"counts": counts, "same": True}, how
    assert said["started"] == [["assets/zstd.js", "lab-zstd"]]  # from the file, named so it serves
    # each buffer sent back once its bytes are in place: one per frame decoded, none kept here
    assert len(said["reused"]) == 3 and min(said["reused"]) >= 4 << 20
    assert said["corrupt"] == f"zstd: a corrupt frame, or one of more than {8 << 20} bytes"
