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
// dynlibs: [path, ...], dirs: [every directory the wheels install, ...]}][the files' bytes, in
// order]; paths relative to site-packages.
"use strict";

(function (global) {
  const SITE = "/lib/python3.12/site-packages/";

  function readBundle(bytes) {
    const size = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + size)));
    let at = 4 + size;
    const files = header.files.map(([path, length]) => {
      const file = [path, bytes.subarray(at, at + length)];
      at += length;
      return file;
    });
    if (at !== bytes.length) throw new Error(`package bundle: ${bytes.length - at} bytes left over`);
    return { files, dynlibs: header.dynlibs, dirs: header.dirs || [] };
  }

  // A preRun for Pyodide's Emscripten module. `bundle()` resolves to the bundle's bytes,
  // `ready()` once whatever else the restore needs has arrived (the snapshot's bytes).
  // `tableBase`: the padded table's length, or a function of the unpadded one (where the
  // snapshot is made). Sets info.table (unpadded) and info.tableBase.
  function preRun(bundle, tableBase, ready, info) {
    return async (Module) => {
      Module.addRunDependency("lab-snapshot");
      try {
        const { files, dynlibs, dirs: allDirs } = readBundle(await bundle());
        const dirs = new Set();
        for (const dir of allDirs) { Module.FS.mkdirTree(SITE + dir); dirs.add(SITE + dir); }
        for (const [path, bytes] of files) {
          const dir = (SITE + path).slice(0, (SITE + path).lastIndexOf("/"));
          if (!dirs.has(dir)) { Module.FS.mkdirTree(dir); dirs.add(dir); }
          Module.FS.writeFile(SITE + path, bytes, { canOwn: true });
        }
        const table = Module.wasmTable;
        info.table = table.length;
        const base = typeof tableBase === "function" ? tableBase(table.length) : tableBase;
        info.tableBase = base;
        if (table.length > base) throw new Error(`function table ${table.length} > ${base}`);
        table.grow(base - table.length);
        const fs = { findObject: (p, d) => Module.FS.findObject(p, d), readFile: (p) => Module.FS.readFile(p) };
        for (const path of dynlibs) {
          await Module.loadDynamicLibrary(SITE + path, { loadAsync: true, global: false, nodelete: true, allowUndefined: true, fs }, {});
        }
        await ready();
      } catch (err) {  // said by the caller (info.error), not thrown: nothing awaits a preRun
        info.error = err;
      } finally {
        Module.removeRunDependency("lab-snapshot");
      }
    };
  }

  // Pyodide calls the global _createPyodideModule(settings) that pyodide.asm.js defines: put
  // `extra()`'s preRun (or none) in front of Pyodide's own (Emscripten runs them last first).
  function wrapCreate(extra, instantiate) {
    let real = null;
    const wrapped = (settings) => {
      const more = extra();
      if (more) settings.preRun = [more, ...settings.preRun];
      // the worker's: a wasm module compiled while the snapshot downloaded, Pyodide's own way after
      if (instantiate && settings.instantiateWasm) settings.instantiateWasm = instantiate(settings.instantiateWasm);
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
      return (entries) => {
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

  const api = { readBundle, preRun, wrapCreate, serialize, deserialize, plainGlobals, SITE };
  if (typeof module === "object" && module.exports) module.exports = api;
  else global.labSnapshot = api;
})(globalThis);
