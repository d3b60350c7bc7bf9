// The page's Python, off the page's own thread: Pyodide, numpy, Bokeh, Panel, sim and ui run
// here; the page keeps BokehJS, the player and the shell, and never waits for Python.
// The messages both ways are named once, in Python (ui/contract.py: WORKER_MESSAGES), and
// arrive here in the start message; the Python side of the link is ui/worker.py.
// Start-up: the page sends "start" (what to load, the message names); the downloads (and the
// wasm's compile) start at once, saying how far they are with "progress". Python runs the page's
// entry script (which posts "render") once the page built ahead of time is on screen ("page":
// the link's query, the ids and t on screen). Then: "patch" in (a setting changed) -> one
// "patch" out with the new run, then "idle"; "call" in (csv, query, apply) -> "reply".
"use strict";

let names = null;  // the message names: WORKER_MESSAGES
let py = null;  // ui.worker, once the page is live
let pageInfo = null, gotPage = null, madeFrom = null;  // the page's latest description; the one Python made its page from
const pagePromise = new Promise((resolve) => { gotPage = resolve; });
const early = [], fetchedEarly = new Map();  // messages before Python was ready; url -> a download started early
function post(type, fields = {}) { self.postMessage({ type, ...fields }); }
// When each step of the start was reached (ms since the epoch, for the page's clock): sent with
// the "start" progress, read by bench/boot.py --breakdown.
const marks = {};
const mark = (name) => { marks[name] = performance.timeOrigin + performance.now(); };
mark("worker");

// ---- how far the download is -----------------------------------------------------------------
// Count bytes and finished packages as they arrive, without changing what Pyodide receives;
// "progress" at most every 100 ms (and at each finished package).
const counted = { core: 0, wheels: 0, wheelFiles: 0, failed: null, stage: "runtime" };
let lastProgress = 0;
function progress(force) {
  if (!force && performance.now() - lastProgress < 100) return;
  lastProgress = performance.now();
  post(names.progress, { stage: counted.stage, core: counted.core, wheels: counted.wheels, wheelFiles: counted.wheelFiles });
}
const realFetch = self.fetch.bind(self);
async function counting(input, init) {
  const url = String(input instanceof Request ? input.url : input);
  let response;
  try {
    response = await realFetch(input, init);
  } catch (err) {  // a missing file under an integrity check rejects here, not with a 404
    if (url.includes("/pyodide/") && !counted.failed) counted.failed = url.split("/").pop();
    // Pyodide's loader may not reject when its runtime cannot be fetched (it waits for ever)
    if (/(\.wasm|\.asm\.js|python_stdlib\.zip)(\.zst)?$/.test(url)) failed("download", String(err));
    throw err;
  }
  if (!response.ok) {
    if (url.includes("/pyodide/") && !counted.failed) counted.failed = `${url.split("/").pop()} (HTTP ${response.status})`;
    return response;
  }
  if (!response.body || !url.includes("/pyodide/")) return response;
  const isWheel = /\.whl$/.test(url);
  const reader = response.body.getReader();
  const stream = new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        if (isWheel) { counted.wheelFiles += 1; progress(true); }
        return controller.close();
      }
      counted[isWheel ? "wheels" : "core"] += value.byteLength;
      progress(false);
      controller.enqueue(value);
    },
    cancel(reason) { reader.cancel(reason); },
  });
  return new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers });
}
// Pyodide's fetches: a download started early (restore) is handed over once; the runtime's
// packed files are decoded (py-fetch.js, from start() on); every byte is counted as it comes.
let unzip = counting;
self.fetch = (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  const fetched = fetchedEarly.get(url);
  if (fetched) { fetchedEarly.delete(url); return fetched; }
  return unzip(input, init);
};

let hasFailed = false;
function failed(kind, detail) {  // the first failure is the one said
  if (!hasFailed) post(names.failed, { kind, file: counted.failed, detail: String(detail || "").slice(-3000) });
  hasFailed = true;
}

// ---- start -----------------------------------------------------------------------------------
// From the memory snapshot where the site has one (the build made it: Python with numpy,
// Bokeh, Panel, sim and ui imported), the normal way otherwise, or if it cannot be restored.
async function start(config) {
  // The snapshot's files asked for first. The scripts that decode them come bundled into this one
  const snap = config.snapshot, first = snap ? [...snap.heap, snap.delta, snap.bundle].map((path) => config.base + path)
    .concat(["pyodide.asm.wasm", "pyodide-lock.json"].map((name) => new URL(name, config.indexURL).href)) : [];
  for (const url of first) fetchedEarly.set(url, self.fetch(url));
  try {  // by the build (sitebuild/bundle.py bundle_worker; a round trip each if not: the sources, as in the tests)
    if (!self.labFetch) importScripts(config.fetchScript, config.zstdScript);
  } catch (err) { return failed("scripts", err); }
  unzip = labFetch.unzipping(counting, () => config.packed || {}, (file, err) => {  // cut short, or corrupt
    counted.failed = counted.failed || file;
    failed("download", `${file}: ${err}`);
  }, self.labZstd.decompress);
  const downloads = config.snapshot ? downloadEarly(config) : null;
  try { importScripts(config.pyodideScript, ...(self.labSnapshot ? [] : [config.snapshotScript])); } catch (err) { return failed("scripts", err); }
  let pyodide = null;
  try {
    if (config.snapshot) {
      try {
        pyodide = await restore(config, downloads);
      } catch (err) {  // the page starts a new worker, which starts the normal way
        return failed("snapshot", err && err.message || err);
      }
    } else {
      await pagePromise;  // the normal start, downloads too, waits for the page's first plot
      pyodide = await startNormally(config);
      if (pyodide === null) return;
    }
    await pagePromise;  // the page's entry script needs what the page shows
    counted.stage = "start";
    mark("python");
    post(names.progress, { stage: "start", core: counted.core, wheels: counted.wheels, wheelFiles: counted.wheelFiles,
      snapshot: Boolean(config.snapshot), marks });
    const entered = performance.now();
    pyodide.registerJsModule("lab_host", { get start() { madeFrom = pageInfo; return pageInfo; },  // read as Python makes the page
      post: (message) => self.postMessage(message), since: () => performance.now() - entered });
    await pyodide.runPythonAsync(config.code + "\nimport ui.app\nawait ui.app.READY\n");
    py = pyodide.pyimport("ui.worker");
  } catch (err) {
    const text = String(err && err.message || err);
    return failed(/Failed to fetch|NetworkError|Load failed|404/.test(text) || counted.failed ? "download" : "start", text);
  }
  remake();
  for (const message of early.splice(0)) handle(message);
  // the files the restore did not need (the standard library, the packages' later files), now
  const warn = (err) => post(names.log, { level: "warn", text: String(err && err.message || err) });
  for (const [name, late] of Object.entries((downloads && downloads.late) || {})) late.load().then(() => mark(name), warn);
}

// Every file the restore needs, downloading at once: the shared heap, the page's changes to it and the
// packages' bundle decoded as they arrive (zstd), the runtime's wasm compiled as it arrives (offline-pyodide.md)
// (Pyodide's own fetch of it given a body that downloads only if read), the lock file kept for it. Its fetch of the standard library
// is given nothing: the file is there all the same (restore's fsInit), and `late` (not counted in the start's
// progress) fetches it, and the packages' later files, once the page is live, or at once if Python reads them.
function downloadEarly(config) {
  const snap = config.snapshot;
  const at = (path) => new URL(path, config.indexURL).href;
  fetchedEarly.set(at("pyodide-lock.json"), fetch(at("pyodide-lock.json")));
  fetchedEarly.set(at("python_stdlib.zip"), Promise.resolve(new Response(new Uint8Array(0))));
  let wasm = null;
  if (typeof WebAssembly.compileStreaming === "function") {
    const module = fetch(at("pyodide.asm.wasm")).then((r) => WebAssembly.compileStreaming(r));
    // Pyodide's own instantiation (if ours fails) asks for it at once: a body that downloads only if read (labFetch.lazy)
    fetchedEarly.set(at("pyodide.asm.wasm"), Promise.resolve(labFetch.lazy(realFetch, at("pyodide.asm.wasm"), "application/wasm")));
    wasm = { module: module.then((m) => { mark("compiled"); return m; }, () => null) };
  }
  // Pyodide sizes the memory by `heap` at once; the files are decoded in a worker of their own, closed once done (its memory too)
  const heap = new Uint8Array(snap.heap_bytes), away = labZstd.away(config.zstdScript);
  const inflate = (path, into) => labFetch.unzstdInto(self.fetch, config.base + path, into, away.decompress);
  let end = 0;  // the shared heap's parts one after the other, then the page's changes over them
  const parts = snap.heap.map((path, i) => inflate(path, heap.subarray(end, end += snap.heap_parts[i])));
  const heapDone = Promise.all([inflate(snap.delta, new Uint8Array(snap.delta_bytes)), ...parts])
    .then(([delta]) => { labSnapshot.applyDelta(heap, delta); labFetch.free(delta); mark("heap"); return heap; });
  const late = (url, size) => labFetch.lateBytes(url, size, self.labZstd.decompress, realFetch);
  const bundle = inflate(snap.bundle, new Uint8Array(snap.bundle_bytes)).then((b) => { mark("bundle"); return b; });
  Promise.all([heapDone, bundle]).finally(() => away.close()).catch(() => {});
  return { wasm, heap, heapDone, bundle, late: { stdlib: late(at("python_stdlib.zip.zst"), config.packed["python_stdlib.zip"]),
      ...(snap.later ? { later: late(config.base + snap.later, snap.later_bytes) } : {}) } };
}
function instantiateEarly(wasm) {
  return (own) => (imports, done) => {
    wasm.module.then((m) => m && WebAssembly.instantiate(m, imports).then((instance) => { done(instance, m); return true; }))
      .catch(() => false).then((ok) => { if (!ok) own(imports, done); });
    return {};
  };
}

async function restore(config, { wasm, heap, heapDone, bundle, late: { stdlib, later } }) {
  const snap = config.snapshot;
  const broken = Promise.all([heapDone, bundle]).then(() => new Promise(() => {}));  // fails at once, not when read
  // Pyodide starts now, not once the page is on screen: its script, the wasm's instantiation,
  // the packages' files and numpy's modules are made while the heap downloads (live came
  // 0.2-0.3 s sooner; the first plot, on the page's own thread, was no later).
  const info = {};
  let fresh = null;  // the wasm's memory as instantiated, as far as the heap was XORed with it (xorBefore)
  const ready = () => heapDone.then((heap) => labSnapshot.xorBefore(heap, fresh, snap.before_bytes, snap.before_sums))
    .finally(() => { if (fresh) labFetch.free(fresh); fresh = null; });
  labSnapshot.wrapCreate(() => labSnapshot.preRun(() => bundle, snap.table_base, ready, info, later && later.get),
    wasm && instantiateEarly(wasm), (memory) => { fresh = memory.slice(0, snap.before_bytes); });
  const pyodide = await Promise.race([broken, loadPyodide({
    indexURL: config.indexURL, env: config.env, _loadSnapshot: heap,
    jsglobals: labSnapshot.plainGlobals(), _snapshotDeserializer: labSnapshot.deserialize,
    fsInit: (FS) => labSnapshot.writeLazily(FS, "/lib/python312.zip", config.packed["python_stdlib.zip"], stdlib.get),
    stdout: () => {}, stderr: (line) => console.debug(line),
  })]).catch((err) => { throw info.error || err; });
  if (info.error) throw info.error;
  // The heap is in the wasm's memory now; Pyodide keeps its copy (90 MB) in its settings for
  // good: detaching it frees it at once, not at a garbage collection that may come much later.
  if (typeof heap.buffer.transfer === "function") heap.buffer.transfer(0);
  mark("restored");
  pyodide.runPython("import numpy, sim, ui.worker");  // restored, and whole
  return pyodide;
}

async function startNormally(config) {
  counted.stage = "runtime";
  const pyodide = await loadPyodide({ indexURL: config.indexURL, env: config.env,
    stdout: () => {}, stderr: (line) => console.debug(line) });
  counted.stage = "packages";
  mark("runtime");
  post(names.progress, { stage: "packages", core: counted.core, wheels: 0, wheelFiles: 0, pyodide: true });
  const errors = [];
  await pyodide.loadPackage(config.packages,
    { messageCallback: () => {}, errorCallback: (msg) => errors.push(msg), checkIntegrity: true });
  if (errors.length || counted.failed) {
    failed(counted.failed ? "download" : "install", errors.join("\n"));
    return null;
  }
  await pyodide.runPythonAsync("import ui.panel_private\nui.panel_private.prepare_pyodide()\n");
  return pyodide;
}

// ---- the page's messages ---------------------------------------------------------------------
// (Python failing outside a page callback is logged; ui.worker said idle already, its finally.
// "relaunch": the page described itself anew since Python made its page, a choice made
// meanwhile, js/ahead.js: its page is made again.)
const remake = () => pageInfo === madeFrom || handle({ type: "relaunch" });
function handle(message) {
  const log = (err) => post(names.log, { level: "error", text: String(err && err.message || err) });
  if (message.type === names.patch) {
    try { py.receive(message.patch); } catch (err) { log(err); }
  } else if (message.type === "relaunch") {
    try { py.relaunch(); } catch (err) { log(err); }
  } else if (message.type === names.call) {
    let value = null, error = null;
    try { value = py.call(message.name, message.argument || ""); } catch (err) { error = String(err && err.message || err); }
    post(names.reply, { id: message.id, value, error });
  }
}

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "start") {  // the one name fixed here: it brings the others
    names = message.names;
    start(message.config);
  } else if (message.type === names.page) {
    pageInfo = message.page;
    gotPage();
    if (py !== null) remake();
  } else if (py === null) {
    early.push(message);
  } else {
    handle(message);
  }
};
