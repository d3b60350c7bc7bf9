// Makes Python's memory snapshot for the site (run by the build, in Node 18+):
//   node sitebuild/snapshot.js <site>/pyodide/ <bundle> <snapshot out> <table margin> <python code>
// (sitebuild/snapshot.py runs it.) Starts the Pyodide the site ships from the package bundle (assets/py-snapshot.js: the same
// start-up order the worker restores in), or restores it from the heap at $LAB_SNAPSHOT_FROM as the worker
// does, runs the code (the imports, or a page), and writes the heap, and beside it (<out>.before) the wasm's memory
// as its instantiation left it.
// Prints one JSON line: the table's length in Node, the padded base, the snapshot's size, the
// files of the modules it holds imported, and what the code left in _lab_report.
"use strict";
const fs = require("fs");
const path = require("path");

const [indexURL, bundlePath, outPath, margin, code] = process.argv.slice(2);
const snap = require(path.join(__dirname, "..", "assets", "py-snapshot.js"));
const info = {};
const bundle = fs.readFileSync(bundlePath);
const from = process.env.LAB_SNAPSHOT_FROM ? fs.readFileSync(process.env.LAB_SNAPSHOT_FROM) : null;
// The wasm's memory as its instantiation left it, as far as its last byte not zero, in whole
// words: the build XORs the heap with it (sitebuild/snapshot.py xor_before).
const fresh = (memory) => {
  let end = memory.length;
  while (end > 0 && memory[end - 1] === 0) end--;
  fs.writeFileSync(outPath + ".before", memory.subarray(0, Math.ceil(end / 4) * 4));
};
snap.wrapCreate(() => snap.preRun(async () => new Uint8Array(bundle.buffer, bundle.byteOffset, bundle.length),
  (length) => length + Number(margin), async () => {}, info), null, fresh);
const { loadPyodide } = require(path.join(indexURL, "pyodide.js"));

(async () => {
  const started = Date.now();
  const pyodide = await loadPyodide({
    indexURL: indexURL.replace(/\/?$/, "/"),
    _makeSnapshot: true,
    ...(from ? { _loadSnapshot: new Uint8Array(from.buffer, from.byteOffset, from.length), _snapshotDeserializer: snap.deserialize } : {}),
    // What the worker's scope has and Node's lacks, that Python takes hold of while importing
    // (pyodide_http); the real one is in its place when the snapshot is restored.
    jsglobals: snap.plainGlobals({ XMLHttpRequest: class XMLHttpRequest {} }),
    // A fixed string-hash seed, and fixed random seeds after the imports (sitebuild/snapshot.py):
    // the same sources make the same snapshot, so the build id stays; each visit reseeds.
    env: { ...JSON.parse(process.env.LAB_SNAPSHOT_ENV || "{}"), PYTHONHASHSEED: "0" },
    stdout: () => {},
    stderr: (line) => process.stderr.write(line + "\n"),
  });
  if (info.error) throw info.error;  // the bundle or numpy's modules did not load
  await pyodide.runPythonAsync(code);
  // The files of the modules now imported (relative to site-packages): the bundle restored with leaves them out.
  const imported = JSON.parse(pyodide.runPython(`
import json, sys
_site = "${snap.SITE}"
_files = {getattr(m, a, None) for m in list(sys.modules.values()) for a in ("__file__", "__cached__")}
json.dumps(sorted(f[len(_site):] for f in _files if isinstance(f, str) and f.startswith(_site)))`));
  // What the code left in _lab_report (JSON: which pages it made, sitebuild/snapshot.py).
  const report = pyodide.runPython("globals().get('_lab_report', 'null')");
  pyodide.runPython("globals().pop('_lab_report', None)");
  // Pyodide checks that the last of its own values Python holds (the packages it found as it
  // started: pyodide.loadedPackages, or after a restore an object of its own) is empty again.
  const own = pyodide._module.__hiwire_get(pyodide._api.getExpectedKeys().length - 1);
  for (const found of [pyodide.loadedPackages, own]) for (const name of Object.keys(found)) delete found[name];
  const heap = pyodide.makeMemorySnapshot({ serializer: snap.serialize });
  fs.writeFileSync(outPath, heap);
  console.log(JSON.stringify({ table: info.table, tableBase: info.tableBase, bytes: heap.length, imported, report, seconds: (Date.now() - started) / 1000 }));
})().catch((err) => {
  console.error(String(err && err.stack || err));
  process.exit(1);
});
