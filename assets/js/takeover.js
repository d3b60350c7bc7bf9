// The live page, rendered out of sight, replaces the page built ahead of time in one frame:
// same t (or the link's), same theme and view, same scroll position. Python calls takeover()
// (python.js: rendered) once its page is rendered and linked.
import { letGo } from "./bokeh-internals.js";
import { $ } from "./config.js";
import { watchFigures } from "./culling.js";
import { postHeight } from "./embeds.js";
import { letJoin } from "./later.js";
import { linkAsksT, seekFromLink, writeUrl } from "./link.js";
import { registerServiceWorker } from "./offline.js";
import { player } from "./player.js";
import { fitSoon } from "./presenter.js";
import { stage } from "./progress.js";
import { announceSoon, label } from "./readers.js";
import { state, timings } from "./state.js";
import { styleDoc } from "./theme.js";
import { enableTransport } from "./transport.js";

// adopted: Python linked itself to the document on screen (the same page, model for model):
// nothing to swap.
export function takeover(jsdoc, adopted) {
  const live = $("lab-app-live");
  const t = state.ownSettings || !state.prerendered ? null : player.t;
  const before = player.doc;  // the page built ahead of time, if it was on screen
  if (!adopted) styleDoc(jsdoc);
  player.takeover(jsdoc);
  if (t === null && linkAsksT()) seekFromLink(player.tMax);
  if (adopted) {
    live.remove();
  } else {
    const old = $("lab-app");
    letGo(old, before !== jsdoc ? before : null);  // its views and its document
    old.remove();
    live.id = "lab-app";
    live.removeAttribute("aria-hidden");
  }
  state.adopted = Boolean(adopted);
  timings.live = performance.now();
  stage("done", "Ready", "", 1);
  document.body.classList.remove("lab-loading", "lab-waiting");
  document.body.classList.add("lab-live", "lab-ready");
  $("lab-status").hidden = true;
  $("btn-csv").disabled = false;
  state.live = true;
  enableTransport(true);
  watchFigures(jsdoc);
  writeUrl();
  afterRender(jsdoc);
  letJoin();  // the parts set aside at first paint, if they waited for this
  registerServiceWorker();
}

// Called when a document is on screen (the page built ahead of time, then the live one).
export function afterRender(doc) {
  label(doc);
  announceSoon();
  // a new document of the same page at the same settings keeps the fitted size (no jump)
  fitSoon(0, !state.live || state.ownSettings);
  postHeight();
}
