// assets/py-fetch.js: the worker's fetch of the runtime's gzipped files (name.gz, unzipped as
// it streams), the heap's unzipping into a buffer, and what a file cut short does.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { gzipSync } from "node:zlib";

const { maybeGunzip, unzipping, gunzipInto } = createRequire(import.meta.url)("../../assets/py-fetch.js");

let seed = 12345;  // a pseudo-random 200 kB: gzip cannot shrink it much, so a cut is a cut
const BYTES = new Uint8Array(200_000).map(() => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed >> 23; });
// A body in chunks of 1,000 bytes, as a network would give it.
function body(bytes) {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) { c.close(); return; }
      c.enqueue(bytes.slice(at, at + 1000));
      at += 1000;
    },
  });
}
// A fetch over a map of url -> bytes that records what was asked.
function fakeFetch(files) {
  const asked = [];
  const fn = async (url) => {
    asked.push(String(url));
    const bytes = files[String(url)];
    return bytes ? new Response(body(bytes), { status: 200 }) : new Response("not found", { status: 404 });
  };
  return { fn, asked };
}
const all = async (stream) => new Uint8Array(await new Response(stream).arrayBuffer());

test("a gzipped body is unzipped, any other passes as it is", async () => {
  assert.deepEqual(await all(await maybeGunzip(body(gzipSync(BYTES)))), BYTES);
  assert.deepEqual(await all(await maybeGunzip(body(BYTES))), BYTES);
  assert.deepEqual(await all(await maybeGunzip(body(new Uint8Array(0)))), new Uint8Array(0));
});

test("the runtime's gzipped files are fetched as name.gz and answered unzipped, with their type", async () => {
  const { fn, asked } = fakeFetch({ "https://x/pyodide/pyodide.asm.wasm.gz": gzipSync(BYTES),
    "https://x/pyodide/pyodide.js": new Uint8Array([1, 2, 3]) });
  const fetch = unzipping(fn, () => ({ "pyodide.asm.wasm": BYTES.length, "python_stdlib.zip": 1 }));
  const wasm = await fetch("https://x/pyodide/pyodide.asm.wasm");
  assert.equal(wasm.headers.get("Content-Type"), "application/wasm");  // compileStreaming needs it
  assert.deepEqual(new Uint8Array(await wasm.arrayBuffer()), BYTES);
  assert.deepEqual(new Uint8Array(await (await fetch("https://x/pyodide/pyodide.js")).arrayBuffer()), new Uint8Array([1, 2, 3]));
  assert.deepEqual(asked, ["https://x/pyodide/pyodide.asm.wasm.gz", "https://x/pyodide/pyodide.js"]);
  // a host that unzipped it already (Content-Encoding: gzip): the bytes as they come
  const plain = unzipping(fakeFetch({ "https://x/python_stdlib.zip.gz": BYTES }).fn, () => ({ "python_stdlib.zip": BYTES.length }));
  const zip = await plain("https://x/python_stdlib.zip");
  assert.equal(zip.headers.get("Content-Type"), "application/zip");
  assert.deepEqual(new Uint8Array(await zip.arrayBuffer()), BYTES);
  // missing: the 404 as it is, for the caller to name
  assert.equal((await unzipping(fakeFetch({}).fn, () => ({ "python_stdlib.zip": 9 }))("https://x/python_stdlib.zip")).status, 404);
});

test("a gzipped runtime file cut short, or longer than said, fails its reader and names itself", async () => {
  for (const [bytes, size] of [[gzipSync(BYTES).slice(0, 5000), BYTES.length], [gzipSync(BYTES), BYTES.length - 1]]) {
    const errors = [];
    const fetch = unzipping(fakeFetch({ "https://x/pyodide.asm.wasm.gz": bytes }).fn, () => ({ "pyodide.asm.wasm": size }),
      (file, err) => errors.push([file, String(err)]));
    const response = await fetch("https://x/pyodide.asm.wasm");
    await assert.rejects(response.arrayBuffer());
    assert.equal(errors.length, 1);
    assert.equal(errors[0][0], "pyodide.asm.wasm.gz");
    assert.match(errors[0][1], / of \d+ bytes|incorrect header|unexpected end/i);
  }
});

test("the heap is unzipped into its buffer whole, or fails naming what is wrong", async () => {
  const files = { "https://x/heap.gz": gzipSync(BYTES), "https://x/short.gz": gzipSync(BYTES.slice(0, 1000)) };
  const { fn } = fakeFetch(files);
  const into = new Uint8Array(BYTES.length);
  assert.equal(await gunzipInto(fn, "https://x/heap.gz", into), into);
  assert.deepEqual(into, BYTES);
  await assert.rejects(gunzipInto(fn, "https://x/short.gz", new Uint8Array(BYTES.length)), /short\.gz: 1000 of 200000 bytes/);
  await assert.rejects(gunzipInto(fn, "https://x/heap.gz", new Uint8Array(10)), /heap\.gz: longer than 10 bytes/);
  await assert.rejects(gunzipInto(fn, "https://x/none.gz", new Uint8Array(10)), /none\.gz: HTTP 404/);
});
