// Python's worker, created and told what to load (python.js starts it when wanted.js says so:
// never before the first plot's files are in). What the worker says before python.js listens
// waits here (a worker's messages are not kept for a listener that comes later).
import { pageConfig } from "./config.js";

let worker = null;
let early = [];
let handler = null;
// The worker's error event (its script missing, blocked or not JavaScript: fuzz N2) is not kept
// for a listener that comes later either: the first one waits here for python.js.
let earlyError = null;
let onError = null;

// Creates the worker and posts "start" (the one message name the worker knows beforehand; it
// brings the others). fromSnapshot false: a new worker, started the normal way. Returns the
// worker, or throws (the caller says so).
export function startWorker(fromSnapshot = true) {
  if (worker && fromSnapshot) return worker;
  const c = pageConfig();
  const base = new URL(".", location.href);
  const at = (path) => new URL(path, base).href;
  worker = new Worker(at("assets/py-worker.js"));
  early = [];
  earlyError = null;
  worker.onmessage = (event) => (handler ? handler(event) : early.push(event));
  worker.onerror = (event) => {
    if (onError) onError(event);
    else earlyError = earlyError || event;
  };
  const names = c.contract.worker;
  worker.postMessage({ type: names.start, names, config: {
    pyodideScript: at("pyodide/pyodide.js"), snapshotScript: at("assets/py-snapshot.js"), base: base.href,
    fetchScript: at("assets/py-fetch.js"), zstdScript: at("assets/zstd.js"), packed: c.worker.packed,
    indexURL: at("pyodide/"), packages: c.packages, code: c.code, env: c.worker.env,
    snapshot: fromSnapshot ? c.worker.snapshot : null,
  } });
  return worker;
}

// Ends the worker (a start that failed, before "Try again" makes a new one).
export function stopWorker() {
  if (worker) worker.terminate();
  worker = null;
  early = [];
  earlyError = null;
}

// python.js listens from now on: messages to fn, the worker's error event to error; what came
// before is handed over first, in order.
export function listen(fn, error) {
  handler = fn;
  onError = error;
  for (const event of early.splice(0)) fn(event);
  if (earlyError) {
    const event = earlyError;
    earlyError = null;
    error(event);
  }
}
