// The worker's zstd decoder: zstd's own decoder compiled to WebAssembly (zstddec's build, pinned
// in pins.toml [zstddec]). Python's heap and the packages' bundle are zstd (sitebuild/zstd.py),
// which no browser decodes natively. It decodes them 4x faster than the JavaScript decoder it
// replaced (fzstd: 0.49 s against 0.13 s in Node, the shared heap, gates' changes and the bundle),
// and that time was on the worker's path to live.
// The wasm comes as `labZstdWasm` (base64): the build writes it at the head of the built file
// (sitebuild/zstd.py write_decoder), the tests set it. Its memory (a frame packed and raw, up to
// 16 MB) is let go once no frame has come for a second: the next frame makes it anew, at once.
"use strict";

(function (global) {
  let compiled = null, instance = null, idle = null;

  function decoder() {
    if (!instance) {
      if (!compiled) {
        const text = global.labZstdWasm;
        if (typeof text !== "string") throw new Error("zstd: the decoder's wasm is missing (labZstdWasm)");
        const bin = atob(text), bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        compiled = new WebAssembly.Module(bytes);  // 54 kB: at once, off the page's thread
      }
      instance = new WebAssembly.Instance(compiled, { env: { emscripten_notify_memory_growth: () => {} } });
    }
    if (idle !== null) clearTimeout(idle);
    idle = setTimeout(release, 1000);
    if (typeof idle === "object" && idle.unref) idle.unref();  // Node: a process may end before
    return instance.exports;
  }
  function release() {
    if (idle !== null) clearTimeout(idle);
    idle = null;
    instance = null;
  }

  // The bytes of one zstd frame (that says its size, as sitebuild/zstd.py writes them): written
  // into `into`, and their count returned; or, with no `into`, as a new array. A corrupt frame,
  // or one that holds more than `into` takes, is an error.
  function decompress(frame, into) {
    const x = decoder();
    const src = x.malloc(frame.length);
    let dst = 0;
    try {
      if (!src) throw new Error("zstd: no memory for the frame");
      new Uint8Array(x.memory.buffer).set(frame, src);
      let size = into ? into.length : Number(x.ZSTD_findDecompressedSize(src, frame.length));
      if (!into && !(size >= 0 && size < 2 ** 31)) throw new Error("zstd: not a frame that says its size");
      dst = x.malloc(Math.max(size, 1));
      if (!dst) throw new Error(`zstd: no memory for ${size} bytes`);
      const n = x.ZSTD_decompress(dst, size, src, frame.length);
      if (x.ZSTD_isError(n)) throw new Error(`zstd: a corrupt frame, or one of more than ${size} bytes`);
      size = n >>> 0;
      const out = new Uint8Array(x.memory.buffer, dst, size);
      if (!into) return out.slice();
      into.set(out);
      return size;
    } finally {
      x.free(src);
      if (dst) x.free(dst);
    }
  }

  const api = { decompress, release };
  if (typeof module === "object" && module.exports) module.exports = api;
  else global.labZstd = api;
})(globalThis);
