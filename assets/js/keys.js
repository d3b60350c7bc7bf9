// The keyboard: each keypress does one thing. A focused control keeps the keys it uses
// itself: text fields and lists every key, sliders and radio groups the arrows, Home/End, Page
// keys and Space, buttons Space and Enter.
import { $, presenting } from "./config.js";
import { player } from "./player.js";
import { fitFormulasSoon } from "./formulas.js";
import { refitRoom } from "./presenter.js";
import { pickScene } from "./scenes.js";
import { toggleTheme } from "./theme.js";
import { togglePresent } from "./view-switch.js";
import { canStep } from "./transport.js";

const SLIDER_KEYS = /^(ArrowLeft|ArrowRight|ArrowUp|ArrowDown|Home|End|PageUp|PageDown| )$/;
const STEPPING = ["ArrowRight", "n", "ArrowLeft", " ", "r", "]", "["];

// Does the focused control (anywhere on the event's path) use this key itself?
export function ownedByControl(event) {
  const path = event.composedPath ? event.composedPath() : [event.target];
  for (const el of path) {
    if (!el || el.nodeType !== 1) continue;
    const tag = el.tagName, type = (el.getAttribute("type") || "").toLowerCase(), role = el.getAttribute("role") || "";
    if (el.isContentEditable || tag === "TEXTAREA" || tag === "SELECT" ||
        (tag === "INPUT" && !["range", "radio", "checkbox", "button", "submit"].includes(type))) return true;
    if ((tag === "INPUT" && ["range", "radio"].includes(type)) || /^(slider|radio|radiogroup|spinbutton|tab|listbox|option)$/.test(role) ||
        (el.classList && el.classList.contains("noUi-handle"))) return SLIDER_KEYS.test(event.key);
    if (tag === "BUTTON" || tag === "A" || tag === "SUMMARY" || role === "button" || (tag === "INPUT" && ["checkbox", "button", "submit"].includes(type))) {
      return event.key === " " || event.key === "Enter";
    }
  }
  return false;
}

function toggleFullscreen() {
  if (document.fullscreenElement) document.exitFullscreen();
  else if (document.documentElement.requestFullscreen) document.documentElement.requestFullscreen().catch(() => {});
}
// The lesson text: hidden or shown on the page; in the presenter view (where it is hidden)
// shown in a column at the side (below on a phone), the figures fitted into what is left, and
// hidden again.
function toggleText() {
  document.documentElement.classList.toggle(presenting() ? "show-text" : "hide-text");
  refitRoom();
  fitFormulasSoon();
}
function toggleHelp() {
  const dlg = $("dlg-help");
  if (dlg.open) dlg.close();
  else dlg.showModal();
}

export const ACTIONS = {
  ArrowRight: () => player.step(), n: () => player.step(), ArrowLeft: () => player.back(),
  " ": () => player.toggle(), r: () => player.reset(), "]": () => player.jump(1), "[": () => player.jump(-1),
  f: toggleFullscreen, p: togglePresent, t: toggleTheme,
  l: toggleText, "?": toggleHelp,
  // in the presenter view: scene 1-9 of the page's (0: the overview of its main views)
  ...Object.fromEntries([..."0123456789"].map((k) => [k, () => pickScene(Number(k))])),
};
const SCENE_KEY = /^[0-9]$/;

// The action a key press asks for, or null (a modifier, a repeated Space, a control's own key,
// an open dialog, nothing to step yet, a scene's number outside the presenter view).
export function actionFor(event, { dialogOpen, stepping, present = false }) {
  if (event.ctrlKey || event.metaKey || event.altKey || event.repeat && event.key === " " || ownedByControl(event)) return null;
  if (dialogOpen && event.key !== "?") return null;
  if (SCENE_KEY.test(event.key) && !present) return null;
  const action = ACTIONS[event.key];
  if (!action || (STEPPING.includes(event.key) && !stepping)) return null;
  return action;
}

export function watchKeys() {
  document.addEventListener("keydown", (event) => {
    const action = actionFor(event, { dialogOpen: !!document.querySelector("dialog[open]"), stepping: canStep(), present: presenting() });
    if (!action) return;
    action();
    event.preventDefault();
  });
}
