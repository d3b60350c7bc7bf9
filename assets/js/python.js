// Every call between the shell and Python, in one module, so the main-thread Pyodide can be
// swapped for a worker client with the same interface.
//
// The shell calls:
//   start()               starts Python (Pyodide, the packages, the page's entry script) and
//                         resolves once the page is live or has failed (progress.js: fail)
//   csv() -> text | null  the current data as CSV (null: Python is not live)
//   query() -> text|null  the settings' query
//   applySettings(q)      applies a page's own settings link in place; the notes it made
//                         (text), or null if Python is not live
// Python calls (window.lab.shell, set before the entry script runs; ui/app.py):
//   theme() -> "light" | "dark"
//   notice(text)          Python's notice (the settings), beside the shell's own
//   takeover(jsdoc, adopted)   the live page is rendered: it takes over (takeover.js)
//   prerendered() -> doc | null   the document on screen, if Python may adopt it
//   defaultSettings() -> query   the settings the page built ahead of time shows
//   setSettings(query)    the settings changed: the link follows
// and, for the frames, window.lab.player (player.js: ids, guard, refresh, prepare, seek, t).
// Python hands back its own hooks as window.lab.py = {csv, query, apply}.
import { linkContract, pageConfig } from "./config.js";
import { notice, writeUrl } from "./link.js";
import { player } from "./player.js";
import { counted, fail, LoadError, progressPackages, progressRuntime, stage, waitingFor } from "./progress.js";
import { state, timings } from "./state.js";
import { takeover } from "./takeover.js";

const py = () => (typeof window !== "undefined" && window.lab && window.lab.py) || null;
export const csv = () => (py() ? py().csv() : null);
export const query = () => (py() ? py().query() : null);
export const applySettings = (q) => (py() && py().apply ? py().apply(q) : null);

// The hooks Python calls (window.lab.shell).
export const shellHooks = {
  theme: () => document.documentElement.dataset.theme,
  notice: (text) => notice(text),
  takeover: (jsdoc, adopted) => takeover(jsdoc, adopted),
  // The document on screen, if Python may take it over (the link asked for no settings of
  // its own), and the settings it was built with.
  prerendered: () => (state.prerendered && !state.ownSettings ? player.doc : null),
  defaultSettings: () => linkContract().defaults,
  setSettings: (q) => { state.settingsQuery = String(q); writeUrl(); },
};

const scriptsMissing = () => fail("A part of the site did not load.",
  "A script is missing or was blocked (pyodide.js, BokehJS or Panel). Reload; if it persists the site copy is incomplete: rebuild it with `make build`.");

export async function start() {
  if (location.protocol === "file:") return;  // boot-early.js says what to do (no module runs from a file in most browsers)
  if (typeof WebAssembly !== "object") {
    return fail("This browser cannot run WebAssembly.",
      "Use a current Chrome, Edge, Firefox or Safari, and check that WebAssembly is not switched off by a policy or an extension.");
  }
  if (typeof window.loadPyodide !== "function") return scriptsMissing();
  const config = pageConfig();
  const base = new URL(".", location.href);
  const at = (path) => new URL(path, base).href;
  try {
    progressRuntime();
    const pyodide = await window.loadPyodide({
      indexURL: at("pyodide/"),
      env: { PANEL_CDN_ROOT: at("static/panel/"), BOKEH_RESOURCES: "cdn", HOME: "/home/pyodide" },
      stdout: () => {},
      stderr: (line) => console.debug(line),
    });
    timings.pyodide = performance.now();
    progressPackages();
    const errors = [];
    await pyodide.loadPackage(config.packages, {
      messageCallback: () => {},
      errorCallback: (msg) => errors.push(msg),
      checkIntegrity: true,
    });
    if (errors.length || counted.failed) {
      throw new LoadError(counted.failed ? `Could not download ${counted.failed}.` : "A package failed to install.", errors.join("\n"));
    }
    timings.packages = performance.now();
    if (!window.Bokeh) return scriptsMissing();
    stage("start", `${waitingFor()}starting the simulator`, "", 0.85);
    window.lab.shell = shellHooks;
    window.lab.pyodide = pyodide;  // for the tests (test_site.py runs Python in the page)
    await pyodide.runPythonAsync(`
import pyodide.ffi
if not hasattr(pyodide.ffi, "jsnull"):
    # Panel 1.9 targets Pyodide 0.29; in 0.27 a JS null already arrives as None.
    pyodide.ffi.jsnull = type("JsNull", (), {})()
`);
    await pyodide.runPythonAsync(config.code + "\nimport ui.app\nawait ui.app.READY\n");
  } catch (err) {
    if (err instanceof LoadError) return fail(err.message, "Reload the page. If it keeps failing, the site copy is incomplete: rebuild it (`make build`) or ask whoever hosts it.", err.detail);
    const text = String(err && err.message || err);
    if (/Failed to fetch|NetworkError|Load failed|404/.test(text) || counted.failed) {
      return fail(counted.failed ? `Could not download ${counted.failed}.` : "A file of the site could not be downloaded.",
        "Check the connection and reload. If you are offline, open the page once while online so it can be kept for later.", text);
    }
    return fail("The simulator could not start.", "Reload the page. If it happens again, please report it with the details below.", text);
  }
}
