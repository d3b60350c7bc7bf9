// Python in Node, restored from the built site's memory snapshot as the worker restores it:
// times making each page object and its document (bench/pyodide_page.py runs this).
//   node bench/pyodide_page.js <site>/pyodide/ <build-info.json> <rounds> <remember: 0|1> <packed sizes JSON>
"use strict";
const fs = require("fs");
const path = require("path");

const [indexURL, infoPath, rounds, remember, packed] = process.argv.slice(2);
const snapInfo = JSON.parse(fs.readFileSync(infoPath, "utf8")).snapshot;
const snap = require(path.join(__dirname, "..", "assets", "py-snapshot.js"));
const { unzstdWhole } = require(path.join(__dirname, "..", "assets", "py-fetch.js"));
const zstd = require(path.join(indexURL, "..", "assets", "zstd.js"));  // the built one: its wasm in it
// a file of zstd frames (sitebuild/zstd.py), `length` bytes raw (as build-info says, as the worker reads it)
const read = (name, length) => unzstdWhole(fs.readFileSync(path.join(indexURL, "..", name)), new Uint8Array(length),
  zstd.decompress, name);
// the shared heap: it holds the imports, and no page made
const heap = Buffer.concat(snapInfo.heap.map((name, i) => read(name, snapInfo.heap_parts[i])));
const bundle = read(snapInfo.bundle, snapInfo.bundle_bytes);
// the standard library as Pyodide reads it in Node: a file of its own, not zstd
const stdLibURL = path.join(require("os").tmpdir(), `lab-stdlib-${process.pid}.zip`);
fs.writeFileSync(stdLibURL, read("pyodide/python_stdlib.zip.zst", JSON.parse(packed)["python_stdlib.zip"]));
process.on("exit", () => fs.rmSync(stdLibURL, { force: true }));
const info = {};
let fresh = null;  // the wasm's memory as instantiated (the heap is XORed with it)
let later = null;  // the packages' files the restore does not open, read when Python opens one
snap.wrapCreate(() => snap.preRun(async () => new Uint8Array(bundle.buffer, bundle.byteOffset, bundle.length),
  snapInfo.table_base, async () => snap.xorBefore(heap, fresh, snapInfo.before_bytes, snapInfo.before_sums), info,
  () => (later = later || read(snapInfo.later, snapInfo.later_bytes))),
  null, (memory) => { fresh = memory.slice(0, snapInfo.before_bytes); });
const { loadPyodide } = require(path.join(indexURL, "pyodide.js"));

const CODE = `
import json, time
from ui import panel_private as pnp
from ui.document import ID_BASE, fresh_ids, replace_html_sanitizer
from ui.pages import PAGES, page_class
replace_html_sanitizer()
if ${Number(remember)}:
    pnp.remember_defaults()
took = {}
for _ in range(${Number(rounds)}):
    for info in PAGES:
        fresh_ids(ID_BASE)
        t0 = time.perf_counter()
        page = page_class(info)()
        t1 = time.perf_counter()
        pnp.make_document(page.layout)
        t2 = time.perf_counter()
        took.setdefault(info.slug, []).append([(t1 - t0) * 1000, (t2 - t1) * 1000])
json.dumps(took)
`;

(async () => {
  const pyodide = await loadPyodide({
    indexURL: indexURL.replace(/\/?$/, "/"), _loadSnapshot: heap, stdLibURL,
    jsglobals: snap.plainGlobals({ XMLHttpRequest: class XMLHttpRequest {} }), _snapshotDeserializer: snap.deserialize,
    stdout: () => {}, stderr: (line) => process.stderr.write(line + "\n"),
  }).catch((err) => { throw info.error || err; });  // a failed preRun leaves Pyodide a heap it cannot run
  if (info.error) throw info.error;
  console.log(await pyodide.runPythonAsync(CODE));
})().catch((err) => {
  console.error(String(err && err.stack || err));
  process.exit(1);
});
