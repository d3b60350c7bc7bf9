// The presenter view's switch (the Present button, p) and the folded settings' button (a phone,
// the presenter view and a named view fold the settings away behind it). Writes
// state.settingsOpen. (Apart from theme.js, which presenter.js and scenes.js import: this one
// imports them.)
import { $, embedded, presenting } from "./config.js";
import { fitFormulasSoon } from "./formulas.js";
import { setView, writeUrl } from "./link.js";
import { fitSoon } from "./presenter.js";
import { syncScenePicker } from "./scenes.js";
import { state } from "./state.js";
import { folded, narrow, restyleAll } from "./theme.js";

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
  fitFormulasSoon();  // (the lesson text's column, or the page's)
}
export const togglePresent = () => setPresent(!presenting());

function syncSettingsButton() {
  const b = $("tp-settings");
  b.hidden = !folded();
  b.setAttribute("aria-expanded", String(state.settingsOpen));
  b.textContent = state.settingsOpen ? "Hide settings" : "Settings";
}

export function watchViewSwitch() {
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
}
