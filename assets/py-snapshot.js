// Python's memory snapshot: one start-up order, the same where it is made (the build, in
// Node: sitebuild's snapshot step) and where it is restored (py-worker.js).
//
// A snapshot holds WebAssembly memory only. What lives outside it must be remade, in the same
// order, before the runtime initialises, both times:
// - the packages' files (the file system is JavaScript objects): written from one bundle;
// - numpy's compiled modules: loaded in one fixed order, into a function table padded to a
//   fixed base. Chromium's table holds one entry more than Node's at this point; the modules'
//   functions must sit at the indices the snapshot's memory points to, so the table is grown
//   to `tableBase` first, and a table already longer than that cannot restore (the caller
//   then starts Python the normal way).
// The bundle: [header length, u32 little-endian][header JSON: {files: [[path, bytes]],
// dynlibs: [path, ...], dirs: [every directory the wheels install, ...], later: [[path, bytes]]}]
// [the files' bytes, in order]; paths relative to site-packages. The files of `later` (none
// where the snapshot is made) are in a file of their own, their bytes one after the other, that
// the restore does not wait for: each is in the file system from the start, and its bytes are
// asked for the first time it is read (lazyFile).
"use strict";

(function (global) {
  const SITE = "/lib/python3.12/site-packages/";

  function readBundle(bytes) {
    const size = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + size)));
    let at = 4 + size;
    const files = header.files.map(([path, length]) => [path, bytes.subarray(at, (at += length))]);
    if (at !== bytes.length) throw new Error(`package bundle: ${bytes.length - at} bytes left over`);
    let offset = 0;
    const later = (header.later || []).map(([path, length]) => [path, (offset += length) - length, length]);  // [path, at, length]
    return { files, dynlibs: header.dynlibs, dirs: header.dirs || [], later, laterBytes: offset };
  }

  // A read-only file of `length` bytes at `path` whose bytes are `bytes()`'s, called the first
  // time the file is read (Emscripten's MEMFS reads node.contents, and sizes by node.usedBytes).
  // `bytes()` failing is an I/O error to the reader (EIO), as a disk's would be.
  function lazyFile(FS, path, length, bytes) {
    const at = path.lastIndexOf("/");
    const node = FS.createFile(path.slice(0, at), path.slice(at + 1), {}, true, false);
    let contents = null;
    Object.defineProperty(node, "contents", {
      configurable: true,
      get() {
        if (contents === null) {
          try {
            contents = bytes();
          } catch (err) {
            console.warn(`${path}: ${err && err.message || err}`);
            throw new FS.ErrnoError(29);
          }
        }
        return contents;
      },
      set(value) { contents = value; },
    });
    node.usedBytes = length;
    return node;
  }

  // Pyodide's write of `path` (its standard library, from the bytes it fetched) makes a lazyFile
  // of `length` bytes instead, whose bytes are `bytes()`'s: for Pyodide's fsInit.
  function writeLazily(FS, path, length, bytes) {
    const write = FS.writeFile;
    FS.writeFile = function (at, ...rest) {
      if (at !== path) return write.call(this, at, ...rest);
      FS.writeFile = write;
      lazyFile(FS, path, length, bytes);
    };
  }

  // A preRun for Pyodide's Emscripten module. `bundle()` resolves to the bundle's bytes,
  // `ready()` once whatever else the restore needs has arrived (the snapshot's bytes);
  // `later()` gives the bytes of the bundle's later files, at once (py-fetch.js lateBytes).
  // `tableBase`: the padded table's length, or a function of the unpadded one (where the
  // snapshot is made). Sets info.table (unpadded) and info.tableBase.
  function preRun(bundle, tableBase, ready, info, later = null) {
    return async (Module) => {
      Module.addRunDependency("lab-snapshot");
      try {
        const { files, dynlibs, dirs: allDirs, later: laterFiles, laterBytes } = readBundle(await bundle());
        const dirs = new Set();
        for (const dir of allDirs) { Module.FS.mkdirTree(SITE + dir); dirs.add(SITE + dir); }
        for (const [path, bytes] of files) {
          const dir = (SITE + path).slice(0, (SITE + path).lastIndexOf("/"));
          if (!dirs.has(dir)) { Module.FS.mkdirTree(dir); dirs.add(dir); }
          Module.FS.writeFile(SITE + path, bytes, { canOwn: true });
        }
        if (laterFiles.length && !later) throw new Error("package bundle: it has later files, and nothing gives them");
        const laterAll = () => {
          const all = later();
          if (all.length !== laterBytes) throw new Error(`the later files: ${all.length} bytes, not ${laterBytes}`);
          return all;
        };
        for (const [path, offset, length] of laterFiles) {
          lazyFile(Module.FS, SITE + path, length, () => laterAll().subarray(offset, offset + length));
        }
        const table = Module.wasmTable;
        info.table = table.length;
        const base = typeof tableBase === "function" ? tableBase(table.length) : tableBase;
        info.tableBase = base;
        if (table.length > base) throw new Error(`function table ${table.length} > ${base}`);
        table.grow(base - table.length);
        const fs = { findObject: (p, d) => Module.FS.findObject(p, d),  // a module's bytes as the bundle holds them, not a copy (6.7 MB)
          readFile: (p) => { const n = Module.FS.lookupPath(p).node; return n.contents instanceof Uint8Array ? n.contents.subarray(0, n.usedBytes) : Module.FS.readFile(p); } };
        for (const path of dynlibs) {
          await Module.loadDynamicLibrary(SITE + path, { loadAsync: true, global: false, nodelete: true, allowUndefined: true, fs }, {});
        }
        await ready();
        skipZeroPages(Module);
      } catch (err) {  // said by the caller (info.error), not thrown: nothing awaits a preRun
        info.error = err;
      } finally {
        Module.removeRunDependency("lab-snapshot");
      }
    };
  }

  // The page's heap: the shared heap (already in `heap`, zeros after its end) with the page's
  // changes written over it (sitebuild/snapshot.py make_delta: [block: u32][heap length: u32]
  // [a bit a block, set where it changed][the changed blocks, the last as far as the heap goes]).
  function applyDelta(heap, delta) {
    const view = new DataView(delta.buffer, delta.byteOffset, delta.length);
    const block = view.getUint32(0, true), length = view.getUint32(4, true);
    if (length !== heap.length || !block) throw new Error(`a page's heap changes: for ${length} bytes, not ${heap.length}`);
    const count = Math.ceil(length / block), bits = delta.subarray(8, 8 + Math.ceil(count / 8));
    const set = (i) => (bits[i >> 3] >> (i & 7)) & 1;
    let at = 8 + bits.length;
    for (let i = 0; i < count;) {
      if (!(i & 7) && !bits[i >> 3]) { i += 8; continue; }
      if (!set(i)) { i++; continue; }
      let end = i + 1;
      while (end < count && set(end)) end++;
      const n = Math.min((end - i) * block, length - i * block);  // the last block: as far as the heap goes
      heap.set(delta.subarray(at, at + n), i * block);
      at += n;
      i = end;
    }
    if (at !== delta.length) throw new Error(`a page's heap changes: ${delta.length - at} bytes left over`);
    return heap;
  }

  // Pyodide writes the heap into the wasm's memory whole (its restoreSnapshot: Module.HEAP8.set),
  // and each page of memory written, zeros too, is the tab's from then on. Its next such write
  // leaves out every 4 kB page that is zeros both in the heap and in the memory already: a page
  // never written costs nothing.
  function skipZeroPages(Module) {
    const real = Module.HEAP8;
    Module.HEAP8 = new Proxy(real, { get: (target, key) => (key === "set" ? sparseSet
      : typeof target[key] === "function" ? target[key].bind(target) : target[key]) });
    function sparseSet(bytes, offset = 0) {
      Module.HEAP8 = real;  // once
      if (offset || bytes.byteOffset % 4 || bytes.length % 4 || bytes.length > real.length) return real.set(bytes, offset);
      const from = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4), to = new Uint32Array(real.buffer, 0, from.length);
      let run = -1;  // where the pages to write began (a page: 1024 words)
      for (let at = 0; at < from.length; at += 1024) {
        let zeros = true;
        for (let i = at; zeros && i < Math.min(at + 1024, from.length); i++) zeros = !from[i] && !to[i];
        if (!zeros && run < 0) run = at;
        if (zeros && run >= 0) { real.set(bytes.subarray(run * 4, at * 4), run * 4); run = -1; }
      }
      if (run >= 0) real.set(bytes.subarray(run * 4), run * 4);
    }
  }

  // Two sums of `words` (a Uint32Array), each modulo 2^32: of the words, and of each word times
  // its place from 1 (sitebuild/snapshot.py before_sums).
  function sums(words) {
    let plain = 0, placed = 0;
    for (let i = 0; i < words.length; i++) { plain = (plain + words[i]) | 0; placed = (placed + Math.imul(i + 1, words[i])) | 0; }
    return [plain >>> 0, placed >>> 0];
  }

  // The heap as it was made: the build XORed its memory's first `length` bytes with the wasm's
  // memory as its instantiation left it (its data; wrapCreate's `fresh`), most of which the heap
  // still holds: zeros, they pack to nothing (sitebuild/snapshot.py xor_before). XORed with
  // `memory` (those bytes, kept) again they are the heap's, if `memory` is what the build found
  // (its `expected` sums): else an error, and the page starts Python anew.
  function xorBefore(heap, memory, length, expected) {
    if (!length) return heap;  // a build that XORed nothing
    const now = new Uint32Array(memory.buffer, memory.byteOffset, length / 4);
    const found = sums(now);
    if (found[0] !== expected[0] || found[1] !== expected[1]) {
      heap.fill(0, 0, 4);  // Pyodide refuses the heap at once (its magic number), not Python later
      throw new Error(`the wasm's memory as instantiated is not the one the heap was made against (sums ${found}, not ${expected})`);
    }
    const at = new DataView(heap.buffer, heap.byteOffset, 8).getUint32(4, true);  // after Pyodide's header
    const words = new Uint32Array(heap.buffer, heap.byteOffset + at, length / 4);
    for (let i = 0; i < words.length; i++) words[i] ^= now[i];
    return heap;
  }

  // Pyodide calls the global _createPyodideModule(settings) that pyodide.asm.js defines: put
  // `extra()`'s preRun (or none) in front of Pyodide's own (Emscripten runs them last first).
  // `fresh(memory)`, if given, sees the wasm's memory (a Uint8Array) as its instantiation left it
  // (its data, zeros after), before any code runs: at once, it keeps what it needs.
  function wrapCreate(extra, instantiate, fresh) {
    let real = null;
    const wrapped = (settings) => {
      const more = extra();
      if (more) settings.preRun = [more, ...settings.preRun];
      // the worker's: a wasm module compiled while the snapshot downloaded, Pyodide's own way after
      if (instantiate && settings.instantiateWasm) settings.instantiateWasm = instantiate(settings.instantiateWasm);
      const own = settings.instantiateWasm;
      if (fresh && own) {
        settings.instantiateWasm = (imports, done) => own(imports, (instance, module) => {
          fresh(new Uint8Array((imports.env.memory || instance.exports.memory).buffer));
          return done(instance, module);
        });
      }
      return real(settings);
    };
    Object.defineProperty(global, "_createPyodideModule", {
      configurable: true,
      get: () => real && wrapped,
      set: (f) => { if (f !== wrapped) real = f; },
    });
  }

  // JavaScript values Python holds when the snapshot is made, which are not globals: Panel's
  // dict converter (panel.io.pyodide._dict_converter, a function made by run_js).
  const DICT_CONVERTER = "panel dict converter";
  function serialize(obj) {
    if (typeof obj === "function" && String(obj).includes("entry[1] === undefined")) return DICT_CONVERTER;
    throw new Error(`cannot keep this JavaScript value in the snapshot: ${String(obj).slice(0, 80)}`);
  }
  function deserialize(name) {
    if (name === DICT_CONVERTER) {
      return (entries) => {  // its text as Panel's (serialize knows it again in a page's run)
        for (const entry of entries) if (entry[1] === undefined) entry[1] = null;
        return Object.fromEntries(entries);
      };
    }
    throw new Error(`unknown value in the snapshot: ${name}`);
  }

  // The global scope as a plain object (the default proxy breaks urllib3), `extra` added.
  function plainGlobals(extra = {}) {
    const plain = {};
    for (const k of Object.getOwnPropertyNames(global)) {
      if (k === "_createPyodideModule") continue;
      try { plain[k] = global[k]; } catch (err) { /* a getter that refuses: not for Python */ }
    }
    return Object.assign(plain, extra);
  }

  const api = { readBundle, lazyFile, writeLazily, applyDelta, sums, xorBefore, skipZeroPages, preRun, wrapCreate, serialize, deserialize, plainGlobals, SITE };
  if (typeof module === "object" && module.exports) module.exports = api;
  else global.labSnapshot = api;
})(globalThis);
