// The figures' look for this view: the theme (light / dark: the reader's, a link's or the
// system's), the presenter view's styling, the folded settings (the Settings button) and
// print, all applied through restyle.js (the Present and Settings buttons: view-switch.js).
import { documentsOnScreen } from "./bokeh-internals.js";
import { $, presenting } from "./config.js";
import { figureKey } from "./fit-measure.js";
import { player } from "./player.js";
import { refitTexts, restyle } from "./restyle.js";
import { state } from "./state.js";

export const narrow = () => (typeof matchMedia === "function" ? matchMedia("(max-width: 700px)") : { matches: false });
// A phone, the presenter view and a named view fold the settings away behind the Settings button.
export const folded = () => presenting() || narrow().matches || !!state.view;

// What the figures show depends on the view: the presenter view shows a page's main view
// scaled to fill the screen (presenter.js fits it); a named view one part; print no controls.
// over: a fit tried out of sight (fit-search.js) in place of the one on screen:
// {view, scale, wide (figure key -> factor), tall, drop}.
const viewOptions = (over = null) => {
  const fit = over || state;
  return { scale: fit.scale, wide: (m) => fit.wide.get(figureKey(m)), tall: fit.tall, drop: fit.drop,
    view: over ? over.view : state.view, fold: folded(), settings: state.settingsOpen, print: state.print,
    room: document.documentElement.classList.contains("show-text") ? $("lab-stage-area").clientWidth - 8 : 0 };
};
export function styleDoc(doc, over = null) {
  const root = document.documentElement;
  restyle(doc, state.print ? "light" : root.dataset.theme, presenting() && !state.print, viewOptions(over));
}
// The numbers in heatmap cells and the axis labels fitted again (restyle.js refitTexts): after
// new frames (a new d: cells of another size) and once a resize has been laid out.
let refitTimer = null;
function refitSoon(ms) {
  clearTimeout(refitTimer);
  refitTimer = setTimeout(() => {
    if (!window.Bokeh) return;
    for (const doc of documentsOnScreen()) refitTexts(doc, presenting() && !state.print, viewOptions());
  }, ms);
}
// Restyles so far (fit-search.js: a try of the fit the document already has is not laid out again).
let restyles = 0;
export const restyleCount = () => restyles;
export function restyleAll(over = null) {
  if (!window.Bokeh) return;
  restyles += 1;
  for (const doc of documentsOnScreen()) styleDoc(doc, over);
}

export function setTheme(name) {
  document.documentElement.dataset.theme = name;
  try { localStorage.setItem("lab-theme", name); } catch (e) { /* blocked storage */ }
  restyleAll();
}
export const toggleTheme = () => setTheme(document.documentElement.dataset.theme === "dark" ? "light" : "dark");

// The theme follows the system's light/dark setting until the reader picks one here; the
// heatmaps' numbers and the axis labels are fitted again after new frames and a resize.
export function watchTheme() {
  if (window.matchMedia) {
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", (e) => {
      let saved = null;
      try { saved = localStorage.getItem("lab-theme"); } catch (err) { /* blocked storage */ }
      if (!saved && !state.shell.theme) {
        document.documentElement.dataset.theme = e.matches ? "dark" : "light";
        restyleAll();
      }
    });
  }
  $("btn-theme").onclick = toggleTheme;
  player.onRefresh(() => refitSoon(0));
  addEventListener("resize", () => refitSoon(250));
}
