// Screen readers: a step is announced politely once stepping stops (t and the page's caption,
// the model with the caption role), and Panel's widgets get the names they lack: sliders'
// handles, spin buttons, checkboxes and a MultiChoice's box have no accessible name, toggle
// groups no state. Named here from the models' own labels; tabs made a tab set (tabs.js) and
// the figures' canvases and number fields' spin buttons taken out of the tab order (BokehJS
// makes each a tab stop).
import { allModels, eventsLayer, isFigure, viewOf, viewsIndexed } from "./bokeh-internals.js";
import { $, frameBindings, hasRole } from "./config.js";
import { postHeight } from "./embeds.js";
import { player } from "./player.js";
import { realTabs } from "./tabs.js";

// Markup read as text: parsed inert (a template runs nothing), hidden parts left out.
export function plainText(html) {
  const tpl = document.createElement("template");
  tpl.innerHTML = String(html);
  tpl.content.querySelectorAll("[aria-hidden='true']").forEach((el) => el.remove());
  return tpl.content.textContent.replace(/\s+/g, " ").trim();
}

export function captionText(p = player) {
  for (const [model, attrs] of p.groups) {
    if (!hasRole(model, "caption")) continue;
    const a = attrs.find(([attr]) => attr === frameBindings().text);
    const html = a && p.frames.data[a[1]][p.t];
    if (html != null) return plainText(html);
  }
  return "";
}
export const announcement = (p = player) => `t = ${p.t} of ${p.tMax}. ${captionText(p)}`.trim();
function announce() {
  const text = announcement(), say = $("lab-say");
  if (say.textContent !== text) say.textContent = text;
}
let sayTimer = null;
export function announceSoon() {
  clearTimeout(sayTimer);
  if (!player.playing) sayTimer = setTimeout(announce, 400);
}

function textOf(model) {
  const t = model && (model.title || model.label || model.text || "");
  const tpl = document.createElement("template");
  tpl.innerHTML = String(t);
  return tpl.content.textContent.replace(/[:\s]+$/, "").trim();
}
// A widget's name: its title, else a label just before it (a group's <label>).
export function nameOf(m, parents) {
  let name = textOf(m);
  const parent = parents.get(m);
  if (!name && parent) {
    const i = parent.children.indexOf(m);
    for (let j = i - 1; j >= 0 && !name; j--) name = textOf(parent.children[j]);
  }
  return name.split(":")[0].trim();
}
// A figure's canvas is a tab stop only when a tool of its own takes keys (an edit tool).
const takesKeys = (m) => m.toolbar && (m.toolbar.tools || []).some((tool) => /Edit/.test(tool.type || ""));
export const label = (doc) => viewsIndexed(() => labelNow(doc));
function labelNow(doc) {
  const models = allModels(doc);
  realTabs(doc);
  for (const m of models) {
    const layer = isFigure(m) && !takesKeys(m) ? eventsLayer(m) : null;
    if (layer && layer.tabIndex !== -1) layer.tabIndex = -1;
  }
  const parents = new Map();
  for (const m of models) for (const k of (m.children && Array.isArray(m.children) ? m.children : [])) if (k && typeof k === "object") parents.set(k, m);
  for (const m of models) {
    if (!("disabled" in m) || !("title" in m || "labels" in m || "label" in m)) continue;
    const view = viewOf(m);
    const sr = view && (view.shadow_el || view.el);
    if (!sr) continue;
    const name = nameOf(m, parents);
    const setName = (el, text) => { if (el && text && el.getAttribute("aria-label") !== text) el.setAttribute("aria-label", text); };
    sr.querySelectorAll(".noUi-handle").forEach((el) => setName(el, name));
    setName(sr.querySelector(".bk-spin-btn-up"), `Increase ${name}`);
    setName(sr.querySelector(".bk-spin-btn-down"), `Decrease ${name}`);
    // one tab stop a number field: its arrows (and ↑ ↓ in the field) do what these buttons do,
    // which the keyboard passed through as two more stops with the browser's thin ring
    sr.querySelectorAll(".bk-spin-btn-up, .bk-spin-btn-down").forEach((el) => { if (el.tabIndex !== -1) el.tabIndex = -1; });
    if (m.type === "Checkbox") setName(sr.querySelector("input[type=checkbox]"), textOf(m));
    setName(sr.querySelector(".choices[role=combobox]"), name);  // a MultiChoice's box (Choices.js)
    const group = sr.querySelector(".bk-btn-group");
    if (group && Array.isArray(m.labels)) {
      group.setAttribute("role", "group");
      setName(group, name);
      group.querySelectorAll(".bk-btn").forEach((b) => b.setAttribute("aria-pressed", String(b.classList.contains("bk-active"))));
    }
    // Choices.js gives its text box (an input of type search) role textbox, which that input
    // may not take (axe: aria-allowed-role); it is a search box
    sr.querySelectorAll(".choices__input[role=textbox]").forEach((el) => el.removeAttribute("role"));
    // Choices.js marks chosen items aria-selected without a role that allows it
    sr.querySelectorAll(".choices__list--multiple .choices__item[aria-selected]:not([role])").forEach((el) => el.removeAttribute("aria-selected"));
  }
}
// The keyboard's focus ring (lab.css's 3 px in the accent colour) on whatever takes focus in a
// shadow root (Panel's and BokehJS's widgets, links in readouts), which the page's stylesheet
// does not reach: a link in a readout had the browser's 1 px ring. One shared sheet, adopted by
// each shadow root as focus first enters it (BokehJS adopts none of its own).
const RING = ":focus-visible { outline: 3px solid var(--accent, #0072B2) !important; outline-offset: 2px; }";
let ring = null;
export function ringRoot(root) {
  if (typeof CSSStyleSheet !== "function" || !root || !root.adoptedStyleSheets || typeof root.adoptedStyleSheets.includes !== "function" || root.nodeType !== 11) return false;
  if (!ring) { ring = new CSSStyleSheet(); ring.replaceSync(RING); }
  if (root.adoptedStyleSheets.includes(ring)) return false;
  root.adoptedStyleSheets = [...root.adoptedStyleSheets, ring];
  return true;
}

let labelTimer = null;
function labelSoon() {
  clearTimeout(labelTimer);
  labelTimer = setTimeout(() => { if (player.doc) label(player.doc); postHeight(); }, 120);
}

export function watchReaders() {
  player.onChange(announceSoon);
  for (const type of ["click", "keyup", "focusin"]) document.addEventListener(type, labelSoon, true);
  document.addEventListener("focusin", (e) => { const el = e.composedPath()[0]; if (el && el.getRootNode) ringRoot(el.getRootNode()); }, true);
  player.onRefresh(labelSoon);  // new settings: widgets may have re-rendered
}
