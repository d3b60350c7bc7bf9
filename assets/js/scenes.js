// The presenter view's scenes: the named views a page offers on keys 1-9 and in the transport
// bar's scene list, stated once in Python (Page.named_views and Page.scenes, written into
// lab-config's link contract: "scenes", "view_labels"); 0 goes back to the overview of the
// main views. A scene is ?view=<name> in the presenter view, so its link (Share) opens it.
import { $, linkContract, presenting } from "./config.js";
import { setView } from "./link.js";
import { fitSoon, joinedNow, stopRehearsal, useKnownFit } from "./presenter.js";
import { state } from "./state.js";
import { holdStill } from "./still.js";
import { restyleAll } from "./theme.js";

export const scenes = () => linkContract().scenes || [];
export const viewLabel = (name) => (linkContract().view_labels || {})[name] || name;

// Show one named view ("" for the whole page, or the overview in the presenter view), fitted.
// In the presenter view a scene is a view of the run already on screen: with its fit known
// (measured ahead of time: presenter.js) one restyle, the scene and its name in the same frame,
// and the fit checked after; else the scene on screen stays (a still) until the new one is fitted.
export function showView(name) {
  if (name === state.view) { stopRehearsal(true); return; }
  stopRehearsal(false);  // this restyle puts the page back
  const known = useKnownFit(name), searched = presenting() && state.fitted > 0 && !known;
  if (searched) holdStill();
  setView(name);
  if (!searched) syncScenePicker();  // else with the fitted scene (watchScenes): never a name over the scene before
  restyleAll();
  fitSoon(0, !known);
  if (!joinedNow()) state.joined.then(() => { restyleAll(); fitSoon(0); });  // parts still joining: fitted with them
}
// Key n in the presenter view: scene n (1-9), 0 the overview. False: no such scene here.
export function pickScene(n) {
  if (!presenting()) return false;
  const name = n === 0 ? "" : scenes()[n - 1];
  if (name === undefined) { stopRehearsal(true); return false; }
  showView(name);
  return true;
}

export function syncScenePicker() {
  const select = $("tp-scene");
  select.hidden = !presenting() || !scenes().length;
  select.value = scenes().includes(state.view) ? state.view : "";
}
export function watchScenes() {
  const select = $("tp-scene"), list = scenes();
  select.replaceChildren(new Option("0 · All main views", ""),
    ...list.map((name, i) => new Option(`${i + 1} · ${viewLabel(name)}`, name)));
  select.onchange = () => showView(select.value);
  document.addEventListener("lab-fitted", syncScenePicker);
  $("help-scenes").textContent = list.length
    ? `On this page: ${list.map((name, i) => `${i + 1} ${viewLabel(name)}`).join(" · ")}.` : "This page has no scenes.";
  syncScenePicker();
}
