// Start-up progress: the line over the screen's bottom edge (what Python is doing, with bytes
// and wheels counted as they arrive; it takes no room, so nothing moves when it goes), and the box that says what failed and what still works.
import { $, pageConfig } from "./config.js";
import { letJoin } from "./later.js";
import { state, timings } from "./state.js";

const MB = (n) => (n / 1e6).toFixed(1);

export function stage(name, label, figures, fraction) {
  state.stage = name;
  if (!$("lab-stage")) return;  // the worker is quicker than the page's body: the next one shows
  $("lab-status").dataset.stage = name;  // lab.css: no bar while nothing loads ("cold")
  $("lab-stage").textContent = label;
  $("lab-figures").textContent = figures || "";
  if (fraction !== undefined) $("lab-bar").style.width = `${Math.round(100 * Math.min(1, fraction))}%`;
}
// In plain words, what the user waits for (the plots already step); what Python is doing, in
// numbers, follows it in a quieter type (lab-figures).
export const waitingFor = () => state.ownSettings
  ? "Getting this link's own settings ready…"
  : "Getting the settings ready…";

// An embed whose Python waits until it is wanted (wanted.js): nothing loads, and the line says
// what will start it and what works meanwhile. It stays until Python starts (first-paint.js
// leaves it), then the usual progress replaces it.
export const COLD = "The settings start when you use them.";
export const COLD_FIGURES = "Step, Back and Play work now.";
// a page opened whole on a data saver or a slow link (config.js savesData): why it waits too
export const savingFigures = (mb) => `Step, Back and Play work now; on a data saver or a slow link Python (${mb} MB) loads only then.`;
export const coldStage = (saving = false) => stage("cold", COLD, saving ? savingFigures(MB(startBytes())) : COLD_FIGURES, 0);
// What Python's start downloads: the runtime, and with a snapshot its two files instead of the
// runtime's packed files (the standard library: fetched once live).
function startBytes() {
  const snap = pageConfig().worker && pageConfig().worker.snapshot;
  const sizes = pageConfig().sizes;
  return sizes.core + (snap ? snap.heap_zstd_bytes + snap.delta_zstd_bytes + snap.bundle_zstd_bytes - (sizes.packed || 0) : 0);
}

// Python could not start. With the page built ahead of time on screen, say what still works.
// retry, when given, is what "Try again" does instead of reloading (the page, its t and its
// scene stay): the box goes and the progress line comes back.
export function fail(what, todo, detail, retry = null) {
  if (state.failed) return;
  if (!$("lab-error")) {  // before the page's body is there: once it is
    document.addEventListener("DOMContentLoaded", () => fail(what, todo, detail, retry), { once: true });
    return;
  }
  document.body.classList.remove("lab-loading");
  document.body.classList.add("lab-failed");
  $("lab-status").hidden = true;
  const box = $("lab-error");
  box.hidden = false;
  box.replaceChildren();
  const h = document.createElement("h2");
  h.textContent = what;
  const p = document.createElement("p");
  p.textContent = todo;
  box.append(h, p);
  if ($("lab-doc") && !state.ownSettings) {
    const still = document.createElement("p");
    still.textContent = `What still works: the plots of ${state.prebuilt ? "the link's" : "the default"} settings below, with Step, Back, Play, Reset, ` +
      "the timeline, the keys, the link's t, CSV, PNG and the theme. Changing a setting needs Python.";
    box.append(still);
  }
  if (detail) {
    const d = document.createElement("details");
    const s = document.createElement("summary");
    s.textContent = "Technical details";
    const pre = document.createElement("pre");
    pre.textContent = String(detail).slice(-3000);
    d.append(s, pre);
    box.append(d);
  }
  const again = document.createElement("button");
  again.type = "button";
  again.textContent = "Try again";
  again.onclick = retry ? () => {
    state.failed = null;
    box.hidden = true;
    document.body.classList.remove("lab-failed");
    $("lab-status").hidden = false;
    retry();
  } : () => location.reload();
  box.append(again);
  state.failed = what;
  timings.failed = performance.now();
  letJoin();  // the page built ahead of time stays: whole
}

// Bytes and finished wheels as they arrive, as the worker counts them (python.js: "progress").
export const counted = { core: 0, wheels: 0, wheelFiles: 0 };

// The runtime's download: with a snapshot, its two files are part of it (and no wheel is).
export function progressRuntime() {
  const total = startBytes();
  stage("runtime", waitingFor(), `downloading the Python runtime ${MB(counted.core)} / ${MB(total)} MB`, 0.45 * counted.core / total);
}
export function progressPackages() {
  const sizes = pageConfig().sizes, n = sizes.count;
  stage("packages", waitingFor(), `installing packages ${Math.min(counted.wheelFiles, n)} / ${n} · ${MB(counted.wheels)} / ${MB(sizes.wheels)} MB`,
    0.45 + 0.35 * counted.wheelFiles / n);
}
