// While the presenter view fits a new scene (a dozen BokehJS layouts, out of sight: the stage
// area is transparent while fitting), the screen keeps a still of what was on the stage: a copy
// of its elements, their shadow roots (BokehJS and Panel draw in them) and the pixels of their
// canvases, in the stage's place above it. It goes in the frame the fitted scene comes back in,
// so a scene key never shows an empty stage (it had for most of a second). Nothing on import.
import { $ } from "./config.js";

let still = null;

// A deep copy of node: shadow roots (their style sheets too) and canvas pixels included; no ids
// (the page's own elements keep theirs) and nothing focusable.
function copyOf(node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return node.cloneNode(false);
  if (node.tagName === "SCRIPT") return document.createTextNode("");
  const copy = node.cloneNode(false);
  copy.removeAttribute("id");
  if (copy.hasAttribute("tabindex")) copy.setAttribute("tabindex", "-1");
  if (node.shadowRoot) {
    try {
      const root = copy.attachShadow({ mode: "open" });
      root.adoptedStyleSheets = node.shadowRoot.adoptedStyleSheets;
      for (const child of node.shadowRoot.childNodes) root.append(copyOf(child));
    } catch (e) { /* an element that takes no shadow root: its light children only */ }
  }
  for (const child of node.childNodes) copy.append(copyOf(child));
  if (node instanceof HTMLCanvasElement && node.width > 0 && node.height > 0) {
    try { copy.getContext("2d").drawImage(node, 0, 0); } catch (e) { /* a canvas that cannot be read */ }
  }
  return copy;
}

// Keep what the stage shows now on screen until releaseStill() (one at a time).
export function holdStill() {
  const area = $("lab-stage-area"), app = $("lab-app");
  if (still || !area || !app) return;
  const r = area.getBoundingClientRect();
  if (r.width <= 0 || r.height <= 0) return;
  still = document.createElement("div");
  still.className = "lab-still";
  still.append(copyOf(app));  // the page on screen (the live one, still out of sight, is not)
  still.setAttribute("aria-hidden", "true");
  still.inert = true;
  Object.assign(still.style, { top: `${r.top}px`, left: `${r.left}px`, width: `${r.width}px`, height: `${Math.min(r.height, innerHeight - r.top)}px` });
  area.after(still);
}
export function releaseStill() {
  if (still) still.remove();
  still = null;
}
export const holdingStill = () => !!still;
