// Python's worker fetches the runtime's standard library gzipped: the build ships
// python_stdlib.zip (stored, for fast imports) as python_stdlib.zip.gz only (sitebuild/runtime.py:
// GZIPPED, 9.4 -> 3.6 MB; a static host does not compress a .zip on its own). Pyodide still asks
// for `name`: `unzipping(fetch, sizes)` is a fetch that asks for `name.gz` instead and answers
// with the unzipped bytes, as a stream, checked against their known length (a stream cut short
// is an error). A host that sends the file with "Content-Encoding: gzip" has the browser unzip
// it: then its bytes are taken as they come. The snapshot's heap and bundle are unzipped into
// their buffers (gunzipInto). Loaded by importScripts (py-worker.js, and bench/boot.py's floor);
// in Node, by require (tests/js/py-fetch.test.js).
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

  // The gzip file at url, unzipped into `into` as it arrives (the whole of it, or an error: a
  // short, long or corrupt file fails gzip's own length and CRC checks, or this one).
  async function gunzipInto(fetchFn, url, into) {
    const response = await fetchFn(url);
    if (!response.ok) throw new Error(`${url.split("/").pop()}: HTTP ${response.status}`);
    const reader = (await maybeGunzip(response.body)).getReader();
    let at = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (at + value.length > into.length) throw new Error(`${url.split("/").pop()}: longer than ${into.length} bytes`);
      into.set(value, at);
      at += value.length;
    }
    if (at !== into.length) throw new Error(`${url.split("/").pop()}: ${at} of ${into.length} bytes`);
    return into;
  }

  const api = { maybeGunzip, unzipping, gunzipInto };
  if (typeof module === "object" && module.exports) module.exports = api;
  else global.labFetch = api;
})(globalThis);
