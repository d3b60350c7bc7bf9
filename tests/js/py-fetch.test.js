// assets/py-fetch.js: the worker's fetch of the runtime's packed files (name.zst, decoded), the
// heap's zstd frames decoded into a buffer as they arrive, bytes wanted before their download is
// in, and what a file cut short does.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const { unzipping, unzstdInto, unzstdWhole, lateBytes, lazy } = createRequire(import.meta.url)("../../assets/py-fetch.js");

let seed = 12345;  // a pseudo-random 200 kB
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

// sitebuild/zstd.py's layout: a skippable frame holding the index ([count][(packed, raw) lengths]),
// then the frames. Here a frame "packs" its bytes reversed, and `unpack` (the decoder's place,
// assets/zstd.js) undoes it into the place given, and says how many bytes it wrote there.
function framed(raw, frameSize) {
  const frames = [];
  for (let at = 0; at < raw.length; at += frameSize) frames.push(raw.slice(at, at + frameSize).reverse());
  const index = new DataView(new ArrayBuffer(4 + 8 * frames.length));
  index.setUint32(0, frames.length, true);
  frames.forEach((f, i) => { index.setUint32(4 + 8 * i, f.length, true); index.setUint32(8 + 8 * i, f.length, true); });
  const head = new DataView(new ArrayBuffer(8));
  head.setUint32(0, 0x184d2a50, true);
  head.setUint32(4, index.byteLength, true);
  const parts = [new Uint8Array(head.buffer), new Uint8Array(index.buffer), ...frames];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => { out.set(p, at); return at + p.length; }, 0);
  return out;
}
function unpack(frame, into) {
  if (frame.length > into.length) throw new Error(`zstd: a corrupt frame, or one of more than ${into.length} bytes`);
  into.set(frame.slice().reverse());
  return frame.length;
}

test("the runtime's packed files are fetched as name.zst and answered decoded, with their type", async () => {
  const { fn, asked } = fakeFetch({ "https://x/pyodide/python_stdlib.zip.zst": framed(BYTES, 30_000),
    "https://x/pyodide/pyodide.js": new Uint8Array([1, 2, 3]) });
  const fetch = unzipping(fn, () => ({ "python_stdlib.zip": BYTES.length }), () => {}, unpack);
  const zip = await fetch("https://x/pyodide/python_stdlib.zip");
  assert.equal(zip.headers.get("Content-Type"), "application/zip");
  assert.deepEqual(new Uint8Array(await zip.arrayBuffer()), BYTES);
  assert.deepEqual(new Uint8Array(await (await fetch("https://x/pyodide/pyodide.js")).arrayBuffer()), new Uint8Array([1, 2, 3]));
  assert.deepEqual(asked, ["https://x/pyodide/python_stdlib.zip.zst", "https://x/pyodide/pyodide.js"]);
  // missing: the 404 as it is, for the caller to name
  const none = unzipping(fakeFetch({}).fn, () => ({ "python_stdlib.zip": 9 }), () => {}, unpack);
  assert.equal((await none("https://x/python_stdlib.zip")).status, 404);
});

test("a packed runtime file cut short, or of another length than said, fails and names itself", async () => {
  const file = framed(BYTES, 30_000);
  for (const [bytes, size, why] of [[file.slice(0, 5000), BYTES.length, /cut short at 5000 bytes/],
    [file, BYTES.length - 1, /holds 200000 bytes, not 199999/]]) {
    const errors = [];
    const fetch = unzipping(fakeFetch({ "https://x/python_stdlib.zip.zst": bytes }).fn, () => ({ "python_stdlib.zip": size }),
      (name, err) => errors.push([name, String(err)]), unpack);
    await assert.rejects(fetch("https://x/python_stdlib.zip"), why);
    assert.equal(errors.length, 1);
    assert.equal(errors[0][0], "python_stdlib.zip.zst");
    assert.match(errors[0][1], why);
  }
});


test("the heap's zstd frames are decoded into its buffer as they arrive, whole", async () => {
  const file = framed(BYTES, 30_000);  // 7 frames, the body in chunks of 1,000 bytes
  let served = 0;
  const fn = async () => new Response(new ReadableStream({
    pull(c) {
      if (served >= file.length) { c.close(); return; }
      c.enqueue(file.slice(served, served + 1000));
      served += 1000;
    },
  }));
  const decodedWhen = [];
  const into = new Uint8Array(BYTES.length);
  const got = await unzstdInto(fn, "https://x/heap.zst", into, (frame, to) => { decodedWhen.push(served); return unpack(frame, to); });
  assert.equal(got, into);
  assert.deepEqual(into, BYTES);
  assert.equal(decodedWhen.length, 7);
  assert.ok(decodedWhen[0] < 40_000, `the first frame waited for ${decodedWhen[0]} bytes`);
  assert.ok(decodedWhen.every((n, i) => i === 0 || n > decodedWhen[i - 1]));
});

test("a zstd file cut short, longer, of another length or without its index fails naming what is wrong", async () => {
  const file = framed(BYTES, 30_000);
  const { fn } = fakeFetch({
    "https://x/heap.zst": file, "https://x/short.zst": file.slice(0, 100_000),
    "https://x/long.zst": Uint8Array.from([...file, 1, 2, 3]), "https://x/plain.zst": BYTES,
    "https://x/head.zst": file.slice(0, 20),
  });
  const into = () => new Uint8Array(BYTES.length);
  await assert.rejects(unzstdInto(fn, "https://x/short.zst", into(), unpack), /short\.zst: cut short at 100000 bytes/);
  await assert.rejects(unzstdInto(fn, "https://x/long.zst", into(), unpack), /long\.zst: longer than \d+ bytes/);
  await assert.rejects(unzstdInto(fn, "https://x/heap.zst", new Uint8Array(10), unpack), /heap\.zst: holds 200000 bytes, not 10/);
  await assert.rejects(unzstdInto(fn, "https://x/plain.zst", into(), unpack), /plain\.zst: not zstd frames with an index first/);
  await assert.rejects(unzstdInto(fn, "https://x/head.zst", into(), unpack), /head\.zst: cut short at 20 bytes/);
  await assert.rejects(unzstdInto(fn, "https://x/heap.zst", into(), (f, to) => unpack(f.slice(1), to)),
    /heap\.zst: frame 1 holds 29999 bytes, not 30000/);
  await assert.rejects(unzstdInto(fn, "https://x/heap.zst", into(), () => { throw new Error("zstd: a corrupt frame"); }),
    /heap\.zst: frame 1: zstd: a corrupt frame/);
  await assert.rejects(unzstdInto(fn, "https://x/none.zst", into(), unpack), /none\.zst: HTTP 404/);
});

test("a zstd file in memory is decoded at once, with the same checks", () => {
  const file = framed(BYTES, 30_000);
  const into = new Uint8Array(BYTES.length);
  assert.equal(unzstdWhole(file, into, unpack, "later.zst"), into);
  assert.deepEqual(into, BYTES);
  assert.throws(() => unzstdWhole(file.slice(0, 100_000), new Uint8Array(BYTES.length), unpack, "later.zst"),
    /later\.zst: cut short at 100000 bytes/);
  assert.throws(() => unzstdWhole(Uint8Array.from([...file, 1]), new Uint8Array(BYTES.length), unpack, "later.zst"),
    /later\.zst: longer than \d+ bytes/);
  assert.throws(() => unzstdWhole(file, new Uint8Array(7), unpack, "later.zst"), /later\.zst: holds 200000 bytes, not 7/);
  assert.throws(() => unzstdWhole(BYTES, new Uint8Array(BYTES.length), unpack, "later.zst"), /not zstd frames/);
});

// A worker's synchronous XMLHttpRequest, over a map of url -> bytes, that records what was asked.
function fakeXHR(files, asked) {
  return class {
    open(method, url, async) { Object.assign(this, { method, url, async }); }
    send() {
      assert.equal(this.async, false);
      assert.equal(this.responseType, "arraybuffer");
      asked.push(this.url);
      const bytes = files[this.url];
      this.status = bytes ? 200 : 404;
      this.response = bytes ? bytes.slice().buffer : null;
    }
  };
}

test("bytes wanted before their download is in are fetched at once, then the download's are given", async () => {
  const file = framed(BYTES, 30_000);
  const { fn, asked } = fakeFetch({ "https://x/later.zst": file });
  const xhrAsked = [];
  globalThis.XMLHttpRequest = fakeXHR({ "https://x/later.zst": file }, xhrAsked);
  try {
    // wanted first: one blocking request, and the same bytes every time after
    const early = lateBytes("https://x/later.zst", BYTES.length, unpack, fn);
    const got = early.get();
    assert.deepEqual(got, BYTES);
    assert.equal(early.get(), got);
    assert.deepEqual([xhrAsked, asked], [["https://x/later.zst"], []]);
    await early.load();
    assert.equal(early.get(), got);  // a later download does not change them
    // downloaded first: kept packed, decoded when first wanted, with no blocking request; load()
    // asks once however often it is called
    xhrAsked.length = 0;
    asked.length = 0;
    const late = lateBytes("https://x/later.zst", BYTES.length, unpack, fn);
    let decoded = 0;
    const counting = (frame, to) => { decoded += 1; return unpack(frame, to); };
    const counted = lateBytes("https://x/later.zst", BYTES.length, counting, fn);
    await Promise.all([late.load(), late.load(), counted.load()]);
    assert.equal(decoded, 0);  // nothing decoded until wanted
    const a = late.get();
    assert.deepEqual(a, BYTES);
    assert.equal(late.get(), a);
    assert.deepEqual(counted.get(), BYTES);
    assert.ok(decoded > 0);
    assert.deepEqual([xhrAsked, asked], [[], ["https://x/later.zst", "https://x/later.zst"]]);
    // a download cut short is fetched again when wanted (a blocking request)
    const cut = fakeFetch({ "https://x/later.zst": file.slice(0, 100_000) });
    const short = lateBytes("https://x/later.zst", BYTES.length, unpack, cut.fn);
    await short.load();
    assert.deepEqual(short.get(), BYTES);
    assert.deepEqual(xhrAsked, ["https://x/later.zst"]);
    // missing: both ways say which file and why
    const gone = lateBytes("https://x/gone.zst", BYTES.length, unpack, fn);
    assert.throws(() => gone.get(), /gone\.zst: HTTP 404/);
    await assert.rejects(gone.load(), /gone\.zst: HTTP 404/);
  } finally {
    delete globalThis.XMLHttpRequest;
  }
});

test("a lazy response downloads its body only once it is read, and whole", async () => {
  const { fn, asked } = fakeFetch({ "https://x/pyodide/pyodide.asm.wasm": BYTES });
  const response = lazy(fn, "https://x/pyodide/pyodide.asm.wasm", "application/wasm");
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(asked, []);  // not asked for until read: a reader that never comes costs nothing
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("Content-Type"), "application/wasm");
  assert.deepEqual(new Uint8Array(await response.arrayBuffer()), BYTES);
  assert.deepEqual(asked, ["https://x/pyodide/pyodide.asm.wasm"]);
});
