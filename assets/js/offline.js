// Offline: the service worker (sw.js) registered once the page has been live a while (or at once
// where one already serves the page), "Saved for offline use" once this build's worker keeps every
// file (it says so), a quiet line for a few seconds and the same in the footer and the help for
// good; the offer to reload into a new build.
// Writes state.offline.
import { $, pageConfig } from "./config.js";
import { state } from "./state.js";

// message: the worker's {type: "lab-saved", build, saved}.
export function offlineSaved(message) {
  if (!message || message.type !== "lab-saved" || message.build !== pageConfig().build || !message.saved || state.offline) return false;
  state.offline = true;
  for (const id of ["lab-offline-state", "lab-offline-help"]) $(id).textContent = "Saved for offline use: this browser opens and runs the Lab with no network.";
  const line = $("lab-offline");
  line.hidden = false;
  setTimeout(() => { line.hidden = true; }, 8000);
  return true;
}

function offerUpdate(reg) {
  if (!reg.waiting || !navigator.serviceWorker.controller) return;
  const bar = document.createElement("div");
  bar.className = "lab-update";
  bar.setAttribute("role", "status");
  bar.textContent = "A new version of the Lab is available. ";
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = "Reload";
  b.onclick = () => {
    reg.waiting.postMessage("activate");
    navigator.serviceWorker.addEventListener("controllerchange", () => location.reload());
  };
  bar.append(b);
  document.body.append(bar);
}

// The first install downloads every file but the heaps (about 20 MB): it waits until the page has
// been live this long, so that it does not share the link with the page a reader opens next
// (bench/network.py: a second page at 10 Mbit/s carried 29 MB until live with the install beside it).
const INSTALL_AFTER_MS = 5000;

export function registerServiceWorker() {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
  if (navigator.serviceWorker.controller) register();
  else setTimeout(register, INSTALL_AFTER_MS);
}

function register() {
  navigator.serviceWorker.addEventListener("message", (e) => offlineSaved(e.data));
  navigator.serviceWorker.register("sw.js").then((reg) => {
    const snap = pageConfig().worker && pageConfig().worker.snapshot;
    const ask = (worker) => {
      if (!worker) return;
      worker.postMessage({ type: "lab-saved?" });
      // this page's memory snapshot (the shared heap, the page's changes), fetched before the
      // worker was there: kept now
      for (const file of snap ? [...snap.heap, snap.delta] : []) worker.postMessage({ type: "lab-keep", url: new URL(file, location.href).href });
    };
    ask(reg.active);  // a visit after the first: already kept?
    if (!reg.active) navigator.serviceWorker.ready.then((r) => ask(r.active));
    offerUpdate(reg);
    reg.addEventListener("updatefound", () => {
      reg.installing.addEventListener("statechange", () => offerUpdate(reg));
    });
  }).catch((e) => console.debug("service worker not registered", e));
}
