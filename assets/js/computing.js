// "Computing the new run…", beside the control that was changed (under it where the window has
// no room at its right: a phone), while the worker computes it
// (python.js). Shown after 150 ms, so a quick run does not flash it; the page keeps stepping
// the current run meanwhile. Without the control's element (a click on the plot, a link's
// settings) it sits at the transport bar.
import { viewOf } from "./bokeh-internals.js";
import { $ } from "./config.js";

const SHOW_AFTER_MS = 150;
let timer = null;

export function showComputing(model) {
  clearTimeout(timer);
  timer = setTimeout(() => place(model), SHOW_AFTER_MS);
}

function place(model) {
  let el = $("lab-computing");
  if (!el) {
    el = document.createElement("div");
    el.id = "lab-computing";
    el.setAttribute("role", "status");
    el.textContent = "Computing the new run…";
    document.body.append(el);
  }
  const view = model ? viewOf(model) : null;
  const rect = view && view.el && view.el.isConnected ? view.el.getBoundingClientRect() : null;
  const anchor = rect && rect.width ? rect : $("tp-step").getBoundingClientRect();
  el.hidden = false;
  const width = el.offsetWidth || 230;
  if (anchor.right + 8 + width <= innerWidth - 8) {  // at the control's right, level with it
    el.style.top = `${anchor.top + scrollY + Math.max(0, (anchor.height - 28) / 2)}px`;
    el.style.left = `${anchor.right + scrollX + 8}px`;
  } else {  // no room there (a phone): under it, never over its own text
    el.style.top = `${anchor.bottom + scrollY + 4}px`;
    el.style.left = `${Math.max(scrollX + 8, Math.min(anchor.left + scrollX, scrollX + innerWidth - width - 8))}px`;
  }
  document.body.classList.add("lab-computing");
}

export function hideComputing() {
  clearTimeout(timer);
  const el = $("lab-computing");
  if (el) el.hidden = true;
  document.body.classList.remove("lab-computing");
}
