// What restyle.js and fit-text.js change a figure's properties with: each property's value as the
// page built it (so a restyle starts from it, not from the last one), a property scaled or set
// only when it changes, and the site's font and a text's width in it. Nothing runs on import.
const bases = new WeakMap();  // model -> {prop: value as the page built it}

export function base(model, prop) {
  let b = bases.get(model);
  if (!b) bases.set(model, (b = {}));
  if (!(prop in b)) b[prop] = model[prop];
  return b[prop];
}
const WHOLE = new Set(["width", "height", "min_width", "min_height", "glyph_width", "glyph_height", "spacing", "label_height"]);
export function scaled(model, prop, factor) {
  if (!(prop in model)) return;
  const b = base(model, prop);
  if (typeof b === "number") set(model, prop, WHOLE.has(prop) ? Math.round(b * factor) : Math.round(b * factor * 100) / 100);
  else if (typeof b === "string" && b.endsWith("px")) set(model, prop, `${Math.round(parseFloat(b) * factor)}px`);
  else if (b && typeof b === "object" && typeof b.value === "string" && b.value.endsWith("px")) {  // a glyph's value spec
    const value = `${Math.round(parseFloat(b.value) * factor)}px`;
    if (!model[prop] || model[prop].value !== value) model[prop] = Object.assign({}, b, { value });
  }
}
export function set(model, prop, value) {
  if (model[prop] !== value) model[prop] = value;
}
// The width a figure gets: its own (planned, as restyle sized it) unless its last layout (was:
// bokeh-internals.js laidOut) says otherwise. A fluid figure takes its container's width, less
// or more than its own (hybrid's memory plot, 553 px of its own, laid out 1,167 px wide, had its
// x axis label sized for a plot area of 139 px: 9 px type in the presenter view), but never more
// than its max_width as now sized: a layout at a larger scale (a fit's earlier try) had sized
// chunkwise's cost titles for a width they no longer had, and cut them.
const FLUID = new Set(["stretch_width", "stretch_both", "scale_width", "scale_both"]);
export function widthGot(model, planned, was) {
  if (!was) return planned;
  if (planned === null || was.width < planned - 2) return was.width;
  if (!FLUID.has(model.sizing_mode)) return planned;
  return typeof model.max_width === "number" ? Math.min(was.width, Math.max(planned, model.max_width)) : was.width;
}

let font = null;
// The site's UI font (lab.css's --font, which the site ships).
export function fontFamily() {
  if (font === null) {
    const css = typeof document !== "undefined" && typeof getComputedStyle === "function"
      ? getComputedStyle(document.documentElement).getPropertyValue("--font") : "";
    font = css.trim() || "sans-serif";
  }
  return font;
}

// The width of a text in the site's font at 1 px (a canvas measures it; in node, an estimate).
let ruler = null;
export function textWidth(text, px = 1, bold = false) {
  if (ruler === null) {
    try { ruler = typeof document !== "undefined" ? document.createElement("canvas").getContext("2d") : false; } catch (e) { ruler = false; }
  }
  if (!ruler) return 0.62 * px * String(text).length;
  ruler.font = `${bold ? "bold " : ""}100px ${fontFamily()}`;
  return (ruler.measureText(String(text)).width / 100) * px;
}
