// When Python starts. Never before the first plot's scripts are in: the shell (one bundle, run
// after BokehJS and Panel) starts it, so Python's downloads (about 17 MB) never share the link
// with them. A page opened whole starts it at once: its worker starts and asks for its files
// while the first plot is drawn (measured at 10 Mbit/s: live 0.2 s sooner than once the plots
// were on screen and the page idle, the link no longer idle meanwhile; the first plot 0.98-1.04x
// the same page's with Python blocked), unless the browser asks to save data or says its link
// is slow (config.js savesData): then, as an embed, it waits to be wanted. An
// embed (?embed=1: a course page's iframe, often several on one page; each live embed holds
// hundreds of MB and downloads about 17 MB) starts nothing of Python until it is wanted: a
// pointer down, focus or a key inside the settings (a slider's handle takes focus even while the
// settings wait), a link to the page's own settings, the Settings button, or a link with
// settings of its own (those need Python at once, an exercise of its own too). Stepping is no sign: the page built ahead of
// time steps alone. And an embed out of view never starts: measured in Chromium, an iframe
// scrolled out of its host's view keeps document.visibilityState "visible", but its root
// element does not intersect the top-level viewport (an IntersectionObserver with no root
// reports it, across origins too). Wanted while out of view, it starts once it comes into view.
// Writes state.python: "waiting" (until one of the above), then "started".
import { embedded, roles, savesData } from "./config.js";
import { coldStage } from "./progress.js";
import { state } from "./state.js";

const INTENT = ["pointerdown", "focusin", "keydown"];

// Is this event a sign that the settings are wanted? Anything inside the settings (the controls
// role) or on a link to the page's own settings; a click on the Settings button (it unfolds
// them; a keyboard's Enter or Space on it clicks too). Stepping keys and buttons are not.
export function wantsSettings(event, cls = roles()) {
  const path = event.composedPath ? event.composedPath() : [event.target];
  for (const el of path) {
    if (!el || el.nodeType !== 1) continue;
    if (el.id === "tp-settings") return event.type === "click";
    const has = (c) => !!el.classList && el.classList.contains(c);
    if ((has(cls.controls) || has(cls.settings_link)) && INTENT.includes(event.type)) return true;
  }
  return false;
}

// Does Python start now? A page opened whole: at once, unless it saves data (frugal). An embed
// or a frugal page: once in view, and wanted or asked for by the link's own settings.
export function shouldStart({ embed, frugal = false, inView, wanted, ownSettings }) {
  return !(embed || frugal) || (inView && (wanted || ownSettings));
}

// Calls start() once: at once (a page opened whole), or when wanted and in view (see the top).
// Returns a function that stops watching (the node tests).
export function startWhenWanted(start, { embed = embedded(), frugal = savesData(), doc = document, Observer = globalThis.IntersectionObserver } = {}) {
  const whole = !embed && !frugal;
  let inView = whole || typeof Observer !== "function";  // no observer (an old browser): in view
  let wanted = false;
  let io = null;
  const onEvent = (event) => {
    if (!wanted && wantsSettings(event)) { wanted = true; check(); }
  };
  const events = [...INTENT, "click"];
  const stop = () => {
    for (const name of events) doc.removeEventListener(name, onEvent, true);
    if (io) io.disconnect();
    io = null;
  };
  function check() {
    if (state.python === "started" || !shouldStart({ embed, frugal, inView, wanted, ownSettings: state.ownSettings || state.sameRun })) return;
    state.python = "started";
    stop();
    start();
  }
  state.python = "waiting";
  if (!whole && !state.ownSettings) coldStage(frugal && !embed);
  for (const name of events) doc.addEventListener(name, onEvent, true);
  if (!inView) {
    io = new Observer((entries) => { inView = entries[entries.length - 1].isIntersecting; check(); });
    io.observe(doc.documentElement);
  }
  check();
  return stop;
}
