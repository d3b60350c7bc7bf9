// Figures out of sight are not repainted. BokehJS repaints every changed figure on every step,
// on screen or not. A figure scrolled out of view (or hidden in the presenter view) holds its
// repaints (hold_render: bokeh-internals.js); it is repainted, as it is now, as soon as it
// comes within NEAR_PX of the view, and before the page is printed. (A view's pause() would not
// stay: BokehJS unpauses every figure each time it lays the page out.)
import { allModels, hold, isFigure, releaseNow, rootViewsOf, viewOf, viewsIndexed } from "./bokeh-internals.js";

export const NEAR_PX = 200;  // a figure this close to the view is painted
let observer = null;
const held = new Map();  // element -> its figure's view

export function nearView(el, box = { width: innerWidth, height: innerHeight }) {
  const r = el.getBoundingClientRect();
  return r.bottom > -NEAR_PX && r.top < box.height + NEAR_PX && r.right > -NEAR_PX && r.left < box.width + NEAR_PX;
}

// Every figure of the document on screen watched (again: views come and go).
export function watchFigures(jsdoc) {
  if (!("IntersectionObserver" in window) || !window.Bokeh) return;
  try {
    if (observer) observer.disconnect();
    held.clear();
    observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const view = held.get(entry.target);
        if (view != null) hold(view.model, !entry.isIntersecting);
      }
    }, { rootMargin: `${NEAR_PX}px` });
    if (!rootViewsOf(jsdoc).length) return;
    viewsIndexed(() => {
      for (const model of allModels(jsdoc)) {
        if (!isFigure(model)) continue;
        const view = viewOf(model);
        if (view != null && view.el) { held.set(view.el, view); observer.observe(view.el); }
      }
    });
  } catch (err) {  // an optimisation only: every figure then keeps painting
    console.warn("Figures out of view keep painting:", err);
  }
}

// Figures with no view yet (a part joining) start held; watchFigures lets them go.
export function holdUnseen(jsdoc) {
  viewsIndexed(() => { for (const model of allModels(jsdoc)) if (isFigure(model) && !viewOf(model)) hold(model, true); });
}

// Printing (and the screenshot helper's synthetic beforeprint) paints every figure now.
export function watchPrinting() {
  window.addEventListener("beforeprint", () => {
    for (const view of held.values()) releaseNow(view);
  });
}
