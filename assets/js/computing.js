// "Computing the new run…", beside the control that was changed, while the worker computes it
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
  el.style.top = `${anchor.top + scrollY + Math.max(0, (anchor.height - 28) / 2)}px`;
  el.style.left = `${Math.min(anchor.right + scrollX + 8, scrollX + innerWidth - 230)}px`;
  el.hidden = false;
  document.body.classList.add("lab-computing");
}

export function hideComputing() {
  clearTimeout(timer);
  const el = $("lab-computing");
  if (el) el.hidden = true;
  document.body.classList.remove("lab-computing");
}
