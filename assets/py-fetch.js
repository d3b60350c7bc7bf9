// Python's worker fetches the runtime's standard library gzipped: the build ships
// python_stdlib.zip (stored, for fast imports) as python_stdlib.zip.gz only (sitebuild/runtime.py:
// GZIPPED, 9.4 -> 3.6 MB; a static host does not compress a .zip on its own). Pyodide still asks
// for `name`: `unzipping(fetch, sizes)` is a fetch that asks for `name.gz` instead and answers
// with the unzipped bytes, as a stream, checked against their known length (a stream cut short
// is an error). A host that sends the file with "Content-Encoding: gzip" has the browser unzip
// it: then its bytes are taken as they come. The snapshot's heap and bundle, zstd in frames,
// are decoded into their buffers (unzstdInto). Loaded by importScripts (py-worker.js, and
// bench/boot.py's floor); in Node, by require (tests/js/py-fetch.test.js).
"use strict";

(function (global) {
  const TYPES = { wasm: "application/wasm", zip: "application/zip" };

  // The stream of `body`, unzipped if it starts as a gzip file does (1f 8b), as it is otherwise.
  async function maybeGunzip(body) {
    const raw = body.getReader();
    const first = await raw.read();
    const zipped = !first.done && first.value.length >= 2 && first.value[0] === 0x1f && first.value[1] === 0x8b;
    const stream = new ReadableStream({
      start(c) { if (first.done) c.close(); else c.enqueue(first.value); },
      async pull(c) { const { done, value } = await raw.read(); if (done) c.close(); else c.enqueue(value); },
      cancel(reason) { return raw.cancel(reason); },
    });
    return zipped ? stream.pipeThrough(new DecompressionStream("gzip")) : stream;
  }

  // `stream`, which must hold `size` bytes, calling onError(err) if reading it fails or it ends
  // short or long (its reader then fails as well).
  function watched(stream, size, onError) {
    const reader = stream.getReader();
    let at = 0;
    return new ReadableStream({
      async pull(c) {
        try {
          const { done, value } = await reader.read();
          if (!done) at += value.length;
          if (at > size || (done && at !== size)) throw new Error(`${at} of ${size} bytes`);
          if (done) c.close(); else c.enqueue(value);
        } catch (err) {
          onError(err);
          c.error(err);
        }
      },
      cancel(reason) { return reader.cancel(reason); },
    });
  }

  // A fetch over `fetchFn` that fetches `name.gz` for each file of `sizes()` (name -> its bytes
  // unzipped) and answers with its bytes unzipped. `onError(file, err)`: the gzip file is
  // corrupt or cut short.
  function unzipping(fetchFn, sizes, onError = () => {}) {
    return async function (input, init) {
      const url = String(input instanceof Request ? input.url : input);
      const file = url.split(/[?#]/)[0].split("/").pop();
      const size = sizes()[file];
      if (size === undefined) return fetchFn(input, init);
      const response = await fetchFn(url.replace(file, `${file}.gz`), init);
      if (!response.ok || !response.body) return response;
      const body = watched(await maybeGunzip(response.body), size, (err) => onError(`${file}.gz`, err));
      const type = TYPES[file.split(".").pop()] || "application/octet-stream";
      return new Response(body, { status: 200, statusText: "OK", headers: { "Content-Type": type } });
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
  // One frame into its place (fzstd writes into a buffer of its own 5x faster than into a given
  // one: then copied).
  function decodeFrame(packed, frames, i, into, decompress, fail) {
    const [p0, p1, r0, r1] = frames[i];
    const out = decompress(packed.subarray(p0, p1));
    if (out.length !== r1 - r0) fail(`frame ${i + 1} holds ${out.length} bytes, not ${r1 - r0}`);
    into.set(out, r0);
  }
  const failing = (name) => (what) => { throw new Error(`${name}: ${what}`); };

  // The file at url, zstd in frames, decoded into `into` as it arrives: each frame by
  // `decompress(frame)` (fzstd's) once its bytes are in. The whole of it, or an error: the
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
    for (;;) {
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
      while (next < frames.length && got >= frames[next][1]) decodeFrame(packed, frames, next++, into, decompress, fail);
    }
    if (!frames || next !== frames.length) fail(`cut short at ${got} bytes`);
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
  // downloads them in the background (fetchFn), `get()` gives them at once, from that download
  // if it is in, or else by a blocking request of its own (a worker's synchronous XHR), so that
  // a file Python opens early is never missing. `got()`: whether they are here.
  function lateBytes(url, size, decompress, fetchFn) {
    let bytes = null;
    let loading = null;
    return {
      got: () => bytes !== null,
      load() {
        loading = loading || unzstdInto(fetchFn, url, new Uint8Array(size), decompress).then((b) => {
          if (bytes === null) bytes = b;
          return bytes;
        });
        return loading;
      },
      get() {
        if (bytes === null) {
          const xhr = new XMLHttpRequest();
          xhr.open("GET", url, false);
          xhr.responseType = "arraybuffer";
          xhr.send(null);
          if (xhr.status !== 200) throw new Error(`${url.split("/").pop()}: HTTP ${xhr.status}`);
          bytes = unzstdWhole(new Uint8Array(xhr.response), new Uint8Array(size), decompress, url.split("/").pop());
        }
        return bytes;
      },
    };
  }

  const api = { maybeGunzip, unzipping, unzstdInto, unzstdWhole, lateBytes };
  if (typeof module === "object" && module.exports) module.exports = api;
  else global.labFetch = api;
})(globalThis);
