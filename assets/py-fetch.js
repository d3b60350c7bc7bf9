// Python's worker fetches the runtime's standard library as zstd in frames: the build ships
// python_stdlib.zip (stored, for fast imports) as python_stdlib.zip.zst only (sitebuild/runtime.py:
// PACKED, 7.9 -> 2.5 MB; a static host does not compress a .zip on its own). Pyodide still asks
// for `name`: `unzipping(fetch, sizes, onError, decompress)` is a fetch that asks for
// `name.zst` instead and answers with its bytes decoded, checked against their known length.
// The snapshot's heap and bundle are decoded into their buffers as they arrive (unzstdInto);
// what a restored Python reads only later is fetched after live, or at once when it reads it
// first (lateBytes). The decoder is zstd's own, in WebAssembly (assets/zstd.js). Loaded by
// importScripts (py-worker.js, zoo-worker.js and bench/boot.py's floor); in Node, by require
// (tests/js/py-fetch.test.js).
"use strict";

(function (global) {
  const TYPES = { wasm: "application/wasm", zip: "application/zip" };

  // A fetch over `fetchFn` that fetches `name.zst` for each file of `sizes()` (name -> its
  // bytes decoded) and answers with its bytes decoded by `decompress` (assets/zstd.js).
  // `onError(file, err)`: the file is corrupt or cut short (the answer is then that error).
  function unzipping(fetchFn, sizes, onError, decompress) {
    return async function (input, init) {
      const url = String(input instanceof Request ? input.url : input);
      const file = url.split(/[?#]/)[0].split("/").pop();
      const size = sizes()[file];
      if (size === undefined) return fetchFn(input, init);
      const response = await fetchFn(url.replace(file, `${file}.zst`), init);
      if (!response.ok || !response.body) return response;
      let bytes;
      try {
        bytes = await unzstdInto(async () => response, `${file}.zst`, new Uint8Array(size), decompress);
      } catch (err) {
        onError(`${file}.zst`, err);
        throw err;
      }
      const type = TYPES[file.split(".").pop()] || "application/octet-stream";
      return new Response(bytes, { status: 200, statusText: "OK", headers: { "Content-Type": type } });
    };
  }

  // The frames of a file zstd in frames (sitebuild/zstd.py: an index in a skippable frame, then
  // frames that do not depend on each other), from its first `got` bytes: [[packed start, packed
  // end, raw start, raw end], ...], or null while the index is not all in. `fail(what)` throws.
  const SKIPPABLE = 0x184d2a50;
  function framesOf(packed, got, rawLength, fail) {
    if (got < 8) return null;
    const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
    if (view.getUint32(0, true) !== SKIPPABLE) fail("not zstd frames with an index first");
    const size = view.getUint32(4, true);
    if (got < 8 + size) return null;
    const count = view.getUint32(8, true);
    if (size < 4 + 8 * count) fail("its index is cut short");
    const frames = [];
    let at = 8 + size;
    let raw = 0;
    for (let i = 0; i < count; i++) {
      const [p, r] = [view.getUint32(12 + 8 * i, true), view.getUint32(16 + 8 * i, true)];
      frames.push([at, at + p, raw, raw + r]);
      at += p;
      raw += r;
    }
    if (raw !== rawLength) fail(`holds ${raw} bytes, not ${rawLength}`);
    if (got > at) fail(`longer than ${at} bytes`);
    return frames;
  }
  // One frame into its place (`decompress(frame, into)` writes its bytes into `into`, and says
  // how many it wrote, or resolves to it: zstd.js away). Returns a promise if it is one.
  function decodeFrame(packed, frames, i, into, decompress, fail) {
    const [p0, p1, r0, r1] = frames[i];
    const check = (n) => { if (n !== r1 - r0) fail(`frame ${i + 1} holds ${n} bytes, not ${r1 - r0}`); };
    const failed = (err) => fail(`frame ${i + 1}: ${err && err.message || err}`);
    let n;
    try {
      n = decompress(packed.subarray(p0, p1), into.subarray(r0, r1));
    } catch (err) {
      failed(err);
    }
    if (n && typeof n.then === "function") return n.then(check, failed);
    check(n);
    return null;
  }
  const failing = (name) => (what) => { throw new Error(`${name}: ${what}`); };
  // Bytes no longer needed, freed now, not at a garbage collection, which in an idle worker may
  // not come for long (a live page's worker held 40-50 MB of such, of 330).
  const free = (bytes) => { if (typeof bytes.buffer.transfer === "function") bytes.buffer.transfer(0); };
  // A response to `url` whose body is fetched (fetchFn) only once it is read: a copy of a download
  // kept for a reader that may never come held all its bytes (the wasm, 10 MB).
  function lazy(fetchFn, url, type) {
    let reader = null;
    return new Response(new ReadableStream({
      async pull(controller) {
        reader = reader || (await fetchFn(url)).body.getReader();
        const { done, value } = await reader.read();
        if (done) controller.close(); else controller.enqueue(value);
      },
      cancel(why) { return reader && reader.cancel(why); },
    }, { highWaterMark: 0 }), { status: 200, headers: { "Content-Type": type } });
  }

  // The file at url, zstd in frames, decoded into `into` as it arrives: each frame by
  // `decompress(frame, into)` (assets/zstd.js) once its bytes are in. The whole of it, or an error: the
  // index, each frame's length and the total are checked against `into`.
  async function unzstdInto(fetchFn, url, into, decompress) {
    const fail = failing(url.split("/").pop());
    const response = await fetchFn(url);
    if (!response.ok) fail(`HTTP ${response.status}`);
    const reader = response.body.getReader();
    let packed = new Uint8Array(1 << 16);  // until the index is read: then as long as the file
    let got = 0;
    let frames = null;
    let next = 0;
    const pending = [];  // frames decoded elsewhere (zstd.js away), and the first error
    let error = null;
    for (;;) {
      if (error) throw error;
      const { done, value } = await reader.read();
      if (done) break;
      if (got + value.length > packed.length) {
        if (frames) fail(`longer than ${packed.length} bytes`);
        const grown = new Uint8Array(Math.max(2 * packed.length, got + value.length));
        grown.set(packed.subarray(0, got));
        packed = grown;
      }
      packed.set(value, got);
      got += value.length;
      if (!frames) {
        frames = framesOf(packed, got, into.length, fail);
        if (!frames) continue;
        const whole = new Uint8Array(frames.length ? frames[frames.length - 1][1] : got);
        whole.set(packed.subarray(0, got));
        packed = whole;
      }
      while (next < frames.length && got >= frames[next][1]) {
        const decoding = decodeFrame(packed, frames, next++, into, decompress, fail);
        if (decoding) pending.push(decoding.catch((err) => { error = error || err; }));
      }
    }
    if (!frames || next !== frames.length) fail(`cut short at ${got} bytes`);
    await Promise.all(pending);
    if (error) throw error;
    free(packed);
    return into;
  }

  // The same for a file all in memory, at once (`name` for its errors).
  function unzstdWhole(packed, into, decompress, name) {
    const fail = failing(name);
    const frames = framesOf(packed, packed.length, into.length, fail);
    if (!frames || (frames.length ? frames[frames.length - 1][1] : packed.length) !== packed.length) {
      fail(`cut short at ${packed.length} bytes`);
    }
    frames.forEach((_, i) => decodeFrame(packed, frames, i, into, decompress, fail));
    return into;
  }

  // The `size` bytes of the file at url (zstd in frames) for a reader that cannot wait: `load()`
  // downloads them in the background (fetchFn) and keeps them packed (most visits never read
  // them: the standard library and the packages' later files held raw were 18 MB of the tab's
  // memory, packed 5); `get()` gives them at once, decoded from that download if it is in, or
  // else by a blocking request of its own (a worker's synchronous XHR), so that a file Python
  // opens early is never missing.
  function lateBytes(url, size, decompress, fetchFn) {
    const name = url.split("/").pop();
    let bytes = null, packed = null, loading = null;
    return {
      load() {
        loading = loading || fetchFn(url).then((response) => {
          if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
          return response.arrayBuffer();
        }).then((b) => { if (bytes === null) packed = new Uint8Array(b); });
        return loading;
      },
      get() {
        if (bytes === null && packed !== null) {
          const got = packed;
          packed = null;  // a download that does not decode is fetched again, below
          try { bytes = unzstdWhole(got, new Uint8Array(size), decompress, name); } catch (err) { console.warn(String(err)); }
          free(got);
        }
        if (bytes === null) {
          const xhr = new XMLHttpRequest();
          xhr.open("GET", url, false);
          xhr.responseType = "arraybuffer";
          xhr.send(null);
          if (xhr.status !== 200) throw new Error(`${name}: HTTP ${xhr.status}`);
          bytes = unzstdWhole(new Uint8Array(xhr.response), new Uint8Array(size), decompress, name);
        }
        return bytes;
      },
    };
  }

  const api = { unzipping, unzstdInto, unzstdWhole, lateBytes, free, lazy };
  if (typeof module === "object" && module.exports) module.exports = api;
  else global.labFetch = api;
})(globalThis);
