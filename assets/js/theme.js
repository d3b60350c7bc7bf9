// The figures' look for this view: the theme (light / dark: the reader's, a link's or the
// system's), the presenter view's styling, the folded settings (the Settings button) and
// print, all applied through restyle.js. Writes state.settingsOpen.
import { documentsOnScreen } from "./bokeh-internals.js";
import { $, embedded, presenting } from "./config.js";
import { setView, writeUrl } from "./link.js";
import { fitSoon, figureKey } from "./presenter.js";
import { player } from "./player.js";
import { refitTexts, restyle } from "./restyle.js";
import { syncScenePicker } from "./scenes.js";
import { state } from "./state.js";

const narrow = () => (typeof matchMedia === "function" ? matchMedia("(max-width: 700px)") : { matches: false });
// A phone, the presenter view and a named view fold the settings away behind the Settings button.
export const folded = () => presenting() || narrow().matches || !!state.view;

// What the figures show depends on the view: the presenter view shows a page's main view
// scaled to fill the screen (presenter.js fits it); a named view one part; print no controls.
const viewOptions = () => ({ scale: state.scale, wide: (m) => state.wide.get(figureKey(m)), tall: state.tall, drop: state.drop,
  view: state.view, fold: folded(), settings: state.settingsOpen, print: state.print });
export function styleDoc(doc) {
  const root = document.documentElement;
  restyle(doc, state.print ? "light" : root.dataset.theme, presenting() && !state.print, viewOptions());
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
export function restyleAll() {
  if (!window.Bokeh) return;
  for (const doc of documentsOnScreen()) styleDoc(doc);
}

export function setTheme(name) {
  document.documentElement.dataset.theme = name;
  try { localStorage.setItem("lab-theme", name); } catch (e) { /* blocked storage */ }
  restyleAll();
}
export const toggleTheme = () => setTheme(document.documentElement.dataset.theme === "dark" ? "light" : "dark");

// Leaving the presenter view goes back to the whole page: no scene, no lesson text at the
// side, the settings unfolded (the Settings button had stayed behind).
export function setPresent(on) {
  document.documentElement.classList.toggle("present", on);
  $("btn-present").setAttribute("aria-pressed", String(on));
  if (!on) {
    document.documentElement.classList.remove("show-text");
    state.settingsOpen = false;
    if (state.view && !embedded()) setView("");
  }
  syncSettingsButton();
  syncScenePicker();
  restyleAll();
  writeUrl();
  fitSoon();
}
export const togglePresent = () => setPresent(!presenting());

function syncSettingsButton() {
  const b = $("tp-settings");
  b.hidden = !folded();
  b.setAttribute("aria-expanded", String(state.settingsOpen));
  b.textContent = state.settingsOpen ? "Hide settings" : "Settings";
}

export function watchTheme() {
  // Follow the system's light/dark setting until the reader picks one here.
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
  $("btn-present").onclick = togglePresent;
  $("btn-present").setAttribute("aria-pressed", String(presenting()));
  $("tp-settings").onclick = () => {
    state.settingsOpen = !state.settingsOpen;
    syncSettingsButton();
    restyleAll();
    fitSoon();
  };
  const q = narrow();
  if (q.addEventListener) q.addEventListener("change", () => { syncSettingsButton(); restyleAll(); });
  syncSettingsButton();
  player.onRefresh(() => refitSoon(0));
  addEventListener("resize", () => refitSoon(250));
}
