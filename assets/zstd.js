// The worker's zstd decoder: zstd's own decoder compiled to WebAssembly (zstddec's build, pinned
// in pins.toml [zstddec]). Python's heap and the packages' bundle are zstd (sitebuild/zstd.py),
// which no browser decodes natively. It decodes them 4x faster than the JavaScript decoder it
// replaced (fzstd: 0.49 s against 0.13 s in Node, the shared heap, gates' changes and the bundle),
// and that time was on the worker's path to live.
// The wasm comes as `labZstdWasm` (base64): the build writes it at the head of the built file
// (sitebuild/zstd.py write_decoder; the Node tests read the file it writes). Its memory (a frame packed and raw, up to
// 16 MB) is let go once no frame has come for a second: the next frame makes it anew, at once.
// A memory let go is freed only at a garbage collection, which in an idle worker may never come
// (a live page held 14 MB more), so the worker's start decodes `away`: in a worker of its own,
// started from this file, which it closes when done.
"use strict";

(function (global) {
  const SERVE = "lab-zstd";  // the name of a worker that decodes for another (away)
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

  // Frames decoded in a worker started from `url` (this file): its `decompress(frame, into)`
  // resolves to how many bytes it wrote into `into`; `close()` ends the worker, and its memory
  // with it. The frames are decoded here instead if that worker cannot start or fails (a host's
  // policy, a file missing, a browser without workers in workers), or leaves frames waiting
  // `patience` ms with no answer (a worker that never starts would have kept the page from live).
  function away(url, Worker = global.Worker, patience = 5000) {
    let worker = null, next = 0, watchdog = null;
    const waiting = new Map();
    const here = (job) => { try { job.resolve(decompress(job.frame, job.into)); } catch (err) { job.reject(err); } };
    const watch = () => {  // from the first frame sent, and again at each answer
      clearTimeout(watchdog);
      watchdog = worker && waiting.size ? setTimeout(fallBack, patience) : null;
    };
    const fallBack = () => {
      clearTimeout(watchdog);
      if (worker) worker.terminate();
      worker = null;
      for (const job of waiting.values()) here(job);
      waiting.clear();
    };
    try {
      worker = new Worker(url, { name: SERVE });
      worker.onmessage = ({ data: { id, out, n, error } }) => {
        const job = waiting.get(id);
        if (!job) return;
        waiting.delete(id);
        if (error) return job.reject(new Error(error));
        job.into.set(out.subarray(0, n));
        job.resolve(n);
        if (worker) worker.postMessage({ reuse: out }, [out.buffer]);  // back, for a frame to come
        watch();
      };
      worker.onerror = (event) => { if (event && event.preventDefault) event.preventDefault(); fallBack(); };
    } catch (err) {
      worker = null;
    }
    return {
      decompress: (frame, into) => new Promise((resolve, reject) => {
        const job = { frame, into, resolve, reject };
        if (!worker) return here(job);
        const id = next++, copy = frame.slice();  // a view's whole buffer would be copied
        waiting.set(id, job);
        worker.postMessage({ id, frame: copy, size: into.length }, [copy.buffer]);
        if (watchdog === null) watch();
      }),
      close() { clearTimeout(watchdog); if (worker) worker.terminate(); worker = null; },
    };
  }
  // In the worker `away` starts: each frame decoded and sent back, in a buffer the other side
  // sends back in turn (new ones each frame were 80 MB that the other side held as garbage).
  function serve() {
    const buffers = [];
    global.onmessage = ({ data: { id, frame, size, reuse } }) => {
      if (reuse) return buffers.push(reuse);
      try {
        let out = buffers.pop();
        if (!out || out.length < size) out = new Uint8Array(size);
        const n = decompress(frame, out.subarray(0, size));
        global.postMessage({ id, out, n }, [out.buffer]);
      } catch (err) {
        global.postMessage({ id, error: String(err && err.message || err) });
      }
    };
  }

  const api = { decompress, release, away, serve, SERVE };
  if (typeof module === "object" && module.exports) module.exports = api;
  else global.labZstd = api;
  if (global.name === SERVE && typeof global.importScripts === "function") serve();
})(globalThis);
