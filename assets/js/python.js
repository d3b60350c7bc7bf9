// Python, in a worker (assets/py-worker.js; its Python side is ui/worker.py). The page keeps
// BokehJS, the player and the shell, and never waits for Python: the two Bokeh documents, one
// here and one there, are linked by JSON patches. The messages are named once, in Python
// (ui/contract.py: WORKER_MESSAGES, lab-config's contract.worker).
//
// The shell calls:
//   start()               starts the worker (worker-start.js) when wanted.js says so, and
//                         listens to it
//   describePage()        once the page built ahead of time is on screen: the worker makes the
//                         live page (it adopts the one on screen when the link has no settings
//                         of its own)
//   csv(), query(), applySettings(q), run(code)   promises of Python's answer (null before live)
// A change made while the worker computes waits, and only the latest value of each setting is
// kept: the next run starts from what the user set last, never from a queue of stale ones.
import { applyPatch, createPatch, deferLayout, letGo } from "./bokeh-internals.js";
import { showComputing, hideComputing } from "./computing.js";
import { $, contract, pageConfig } from "./config.js";
import { showOnPlots } from "./hint.js";
import { notice, writeUrl } from "./link.js";
import { player } from "./player.js";
import { counted, fail, progressPackages, progressRuntime, stage, waitingFor } from "./progress.js";
import { state, timings } from "./state.js";
import { takeover } from "./takeover.js";
import { listen, startWorker, stopWorker } from "./worker-start.js";

let worker = null;
let live = null;  // the linked BokehJS document
let busy = false;  // the worker is handling a change
let waiting = [];  // changes made meanwhile (the latest per model and property)
let patching = 0;  // applying the worker's patch: nothing of it goes back
let pageWanted = false;  // the page on screen is ready to be described (describePage was called)
let inbox = Promise.resolve();  // messages handled one at a time, in order
let heard = false;  // the worker has said something: its script loaded and runs
const replies = new Map();
let calls = 0;
const names = () => contract().worker;
const post = (type, fields = {}) => worker.postMessage({ type, ...fields });

function call(name, argument = "") {
  if (!live) return Promise.resolve(null);
  const id = ++calls;
  post(names().call, { id, name, argument });
  return new Promise((resolve, reject) => replies.set(id, { resolve, reject }));
}
export const csv = () => call("csv");
export const query = () => call("query");
export const applySettings = (q) => call("apply", q);
export const run = (code) => call("run", code);

// ---- the page's changes, to the worker ------------------------------------------------------
// The changes waiting for the worker, with `event` added: a value supersedes the one of the
// same model and property waiting before it; everything else keeps its order.
export function coalesce(pending, event) {
  const kept = event.kind !== "ModelChanged" ? pending
    : pending.filter((e) => !(e.kind === "ModelChanged" && e.model === event.model && e.attr === event.attr));
  return [...kept, event];
}
function sendChange(event) {
  if (patching > 0) return;
  showComputing(event.model);
  if (busy) {
    waiting = coalesce(waiting, event);
    return;
  }
  busy = true;
  post(names().patch, { patch: createPatch(live, [event]) });
}
function idle() {
  if (waiting.length) {
    const events = waiting;
    waiting = [];
    post(names().patch, { patch: createPatch(live, events) });
    return;
  }
  busy = false;
  hideComputing();
}

// ---- the worker's, to the page -----------------------------------------------------------------
// A new run arrives as one message: the player lets go of the old run, the patch goes in, the
// player shows the new frames, all in one task (one frame).
function patched(message) {
  if (message.prepare) player.prepare();
  patching += 1;
  // one layout of the page for the whole patch, not one for each view it changes: the
  // controls' "ready" patch took 220 ms (running-sum's four buttons laid the page out eight times)
  const layoutOnce = deferLayout(live);
  try { applyPatch(live, message.patch, message.buffers); } finally { patching -= 1; layoutOnce(); }
  if (message.refresh) player.refresh();
  if (message.seek !== undefined && message.seek !== null) showOnPlots(message.seek);  // hint.js
}
// A render made from an older description of the page (a choice answered ahead of time made
// since, ahead.js) is dropped: the worker makes the page again from the latest.
const stale = (message) => message.version !== described;
async function rendered(message) {
  if (stale(message)) return;
  const jsdoc = message.adopted ? player.doc : await renderLive(message.doc);
  if (stale(message)) { if (!message.adopted) letGo($("lab-app-live"), jsdoc); return; }
  live = jsdoc;
  if (message.ready) patched(message.ready);  // the adopted page's controls, enabled
  timings.python = message.timings;  // ms per step of making the live page, in the worker
  player.guard(jsdoc);
  jsdoc.on_change(sendChange, false);
  state.settingsQuery = String(message.query);
  takeover(jsdoc, message.adopted);
  notice(message.notice || "");
}
async function renderLive(docJson) {
  const views = await window.Bokeh.embed.embed_item(JSON.parse(docJson));
  return views.roots[0].model.document;
}
function progressed(message) {
  Object.assign(counted, { core: message.core, wheels: message.wheels, wheelFiles: message.wheelFiles });
  if (message.stage === "runtime") return progressRuntime();
  if (message.stage === "packages") {
    if (message.pyodide) timings.pyodide = performance.now();
    return progressPackages();
  }
  timings.packages = performance.now();  // Python is up: restored, or started and installed
  if (message.snapshot) timings.pyodide = timings.packages;
  timings.snapshot = Boolean(message.snapshot);
  timings.worker = Object.fromEntries(Object.entries(message.marks || {}).map(([k, v]) => [k, v - performance.timeOrigin]));
  stage("start", waitingFor(), "starting the simulator", 0.85);
}
const AGAIN = "Reload the page. If it keeps failing, the site copy is incomplete: rebuild it (`make build`) or ask whoever hosts it.";
function failed(message) {
  if (message.kind === "snapshot") {  // a new worker, which starts the normal way
    console.warn(`Python's snapshot could not be restored (${message.detail}): starting the normal way.`);
    worker.terminate();
    inbox = Promise.resolve();
    start(false);  // tells the new worker what is on screen
    return;
  }
  if (message.kind === "scripts") {
    return fail("A part of the site did not load.",
      "A script of Python's worker is missing or was blocked (pyodide.js, py-snapshot.js or py-fetch.js: the details say which). Try again; if it persists the site copy is incomplete: rebuild it with `make build`.", message.detail, retryStart);
  }
  if (message.kind === "download") {
    return fail(message.file ? `Could not download ${message.file}.` : "A file of the site could not be downloaded.",
      "Check the connection and try again. If you are offline, open the page once while online so it can be kept for later.", message.detail, retryStart);
  }
  if (message.kind === "install") return fail("A package failed to install.", AGAIN, message.detail);
  return fail("The simulator could not start.", "Reload the page. If it happens again, please report it with the details below.", message.detail);
}
function replied(message) {
  const r = replies.get(message.id);
  replies.delete(message.id);
  if (r) (message.error ? r.reject(new Error(message.error)) : r.resolve(message.value));
}
function handlers() {
  const n = names();
  return {
    [n.progress]: progressed, [n.failed]: failed, [n.render]: rendered, [n.patch]: patched, [n.idle]: idle,
    [n.reply]: replied, [n.notice]: (m) => notice(m.text),
    [n.settings]: (m) => { state.settingsQuery = String(m.query); writeUrl(); },
    [n.log]: (m) => (console[m.level] || console.log)(m.text),
  };
}

// ---- start ---------------------------------------------------------------------------------------
export function start(fromSnapshot = true) {
  if (location.protocol === "file:") return;  // boot-early.js says what to do
  if (typeof WebAssembly !== "object" || typeof Worker !== "function") {
    return fail("This browser cannot run WebAssembly in a worker.",
      "Use a current Chrome, Edge, Firefox or Safari, and check that WebAssembly is not switched off by a policy or an extension.");
  }
  if (worker && fromSnapshot) return;
  try {
    worker = startWorker(fromSnapshot);
  } catch (err) {
    return fail("The simulator could not start.", "Reload the page. If it happens again, please report it with the details below.", String(err));
  }
  const table = handlers();
  progressRuntime();
  heard = false;
  listen((event) => {
    heard = true;
    const handler = table[event.data.type];
    inbox = inbox.then(() => handler && handler(event.data)).catch((err) => console.error("worker message:", err));
  }, workerError);
  if (pageWanted) describePage();  // an embed started after its first paint (wanted.js)
}
// The worker's own error event. Before its first message, its script did not load (missing,
// blocked, or not JavaScript: the event comes within about a second, and says nothing more);
// afterwards, Python's start broke outside its own error handling.
function workerError(event) {
  if (state.live) return console.error("Python's worker:", event.message || event);
  const where = new URL("assets/py-worker.js", location.href).pathname;
  if (!heard) {
    return fail("The settings cannot start: a script of the site did not load.",
      `Python's worker script (${where}) is missing, was blocked, or is not JavaScript. Try again; if it persists the site copy is incomplete: rebuild it with \`make build\`, or ask whoever hosts it.`,
      event.message || `${where} did not load as a worker script`, retryStart);
  }
  return fail("The simulator could not start.", "Try again. If it happens again, please report it with the details below.",
    String(event.message || event), retryStart);
}
// "Try again" after a failed start: a new worker, from the snapshot, told what is on screen.
function retryStart() {
  stopWorker();
  worker = null;
  inbox = Promise.resolve();
  start();
}

// What the worker makes the live page from: the link's query, and the ids of the document on
// screen if the live page may adopt it: the default run, or one built ahead of time (Python
// makes the same page, model for model). A link with settings of its own, or its own exercise
// (the box is Python's), is rendered anew.
export function pageInfo(search = location.search) {
  const doc = state.prerendered && !state.ownSettings && !state.sameRun ? player.doc : null;
  return { search, ids: doc ? player.ids(doc) : null, defaults: pageConfig().link.defaults, t: player.t };
}
// Called once the page built ahead of time is on screen; before Python has started (an embed
// waiting to be wanted), start() sends it, with the t stepped to meanwhile. Again after a
// choice answered ahead of time changed the page on screen (ahead.js: describeAgain).
let described = 0;  // the descriptions sent: "render" names the one it was made from
export function describePage() {
  pageWanted = true;
  if (!worker) return;
  post(names().page, { page: { ...pageInfo(), version: ++described } });
}
export function describeAgain() { if (pageWanted) describePage(); }
