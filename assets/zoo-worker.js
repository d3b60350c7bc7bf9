// The zoo's Python (zoo.html), started only when the reader adds a config.json of their own:
// the file becomes a row of the table, made by ui/zoo.py's pasted_row_json, the function the
// build made every other row with. It loads as little as that needs: Pyodide, numpy and the
// project's wheel (ui.zoo imports sim and the standard library; no param, Bokeh or Panel), all
// from the site, so the service worker (sw.js) keeps them for offline use. The messages are
// named in Python (ui/zoo.py WORKER) and arrive in the start message, with what to load
// (sitebuild/zoo.py worker_config, resolved against the page's address by assets/js/zoo-paste.js).
"use strict";

let names = null;
let rowOf = null;  // ui.zoo.pasted_row_json, once Python is ready
let toPy = null;
const waiting = [];  // rows asked for before Python was ready

function post(type, fields = {}) { self.postMessage({ type, ...fields }); }
const text = (err) => String((err && err.message) || err).trim().split("\n").filter(Boolean).pop() || "unknown error";

async function start(config) {
  try {
    // the runtime's standard library as zstd frames, and their decoder
    importScripts(config.fetchScript, config.zstdScript);
    self.fetch = labFetch.unzipping(self.fetch.bind(self), () => config.packed, (file, err) => {
      post(names.failed, { message: `${file} arrived cut short or corrupt (${text(err)})` });
    }, self.labZstd.decompress);
    importScripts(config.pyodideScript);
    const pyodide = await loadPyodide({ indexURL: config.indexURL, env: { HOME: "/home/pyodide" },
      stdout: () => {}, stderr: (line) => console.debug(line) });
    const errors = [];
    // numpy by name (its lock entry, integrity checked); the wheel by its address: by name its
    // lock entry would bring Bokeh and Panel, which the rows do not need
    await pyodide.loadPackage([...config.packages, config.wheelURL],
      { messageCallback: () => {}, errorCallback: (m) => errors.push(m), checkIntegrity: true });
    if (errors.length) throw new Error(errors.join(" "));
    rowOf = pyodide.pyimport(config.module)[config.function];
    toPy = (bytes) => pyodide.toPy(bytes);
  } catch (err) {
    post(names.failed, { message: text(err) });
    return;
  }
  post(names.ready);
  for (const message of waiting.splice(0)) row(message);
}

function row(message) {
  let proxy = null;
  try {
    proxy = message.bytes ? toPy(message.bytes) : null;  // a file: its bytes (Python drops a BOM)
    const value = rowOf(proxy || message.text, message.name || "", message.key);
    post(names.row, { id: message.id, value });
  } catch (err) {  // not a ValueError (those come back as {"error"}): Python itself failed
    post(names.row, { id: message.id, value: JSON.stringify({ error: `Python failed on this file: ${text(err).slice(0, 300)}` }) });
  } finally {
    if (proxy && proxy.destroy) proxy.destroy();
  }
}

self.onmessage = (event) => {
  const message = event.data;
  if (message.type === "start") {  // the one name fixed here: it brings the others
    names = message.names;
    start(message.config);
  } else if (names && message.type === names.row) {
    if (rowOf) row(message); else waiting.push(message);
  }
};
