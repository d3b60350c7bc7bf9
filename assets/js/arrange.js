// Which parts of a page a view shows: the presenter view its main views, ?view=<name> one
// named part, a phone and print the settings folded away. Pages mark their Panel layouts with
// role classes (css_classes, ui/contract.py's ROLES): main_view (what the presenter view shows),
// secondary (never in the presenter view), controls (the settings, folded away in the presenter
// view, on phones and in print), present_drop, no_print, and the view prefix + a name
// (?view=<name>). Works in node.
import { allModels, isFigure, rootsOf } from "./bokeh-internals.js";
import { contract, hasClass, hasRole, roles, viewClass } from "./config.js";

export function kids(m) {
  const c = m.children, out = [];
  const add = (x) => { if (Array.isArray(x)) x.forEach(add); else if (x && typeof x === "object" && "visible" in x && "css_classes" in x) out.push(x); };
  if (Array.isArray(c)) c.forEach(add);
  else if (c instanceof Map) for (const v of c.values()) add(v);
  else if (c && typeof c === "object" && !("visible" in c)) for (const v of Object.values(c)) add(v);
  if (m.child) add(m.child);
  return out;
}
// The named views of a document (the view prefix + a name).
export function viewNames(doc) {
  const prefix = contract().view_prefix, names = new Set();
  for (const m of allModels(doc)) for (const cls of m.css_classes || []) if (cls.startsWith(prefix)) names.add(cls.slice(prefix.length));
  return [...names];
}
// show: the parts a view is made of (null: the whole page); hide: the parts it leaves out;
// keep: a part never left out. Settings unfolded are shown beside a named or main view. A named
// view in the presenter view (a scene) shows its part, secondary or not (?present=1&view=cost,
// a secondary part, had shown nothing); what it may leave out is inside it, never itself.
export function layoutWanted(doc, present, opts) {
  const r = roles(), hide = [], keep = [];
  let show = null;
  if (opts.view && viewNames(doc).includes(opts.view)) keep.push(...(show = [viewClass(opts.view)]));
  else if (present && allModels(doc).some((m) => hasRole(m, "main_view"))) show = [r.main_view];
  if (present && !opts.print && !keep.length) hide.push(r.secondary);
  if (present && opts.drop && !opts.print) hide.push(r.present_drop);  // a screen too small for all
  if ((present || opts.fold || opts.print || show) && !opts.settings) hide.push(r.controls);
  else if (show) show.push(r.controls);
  if (opts.print) hide.push(r.no_print);
  return { show, hide, keep };
}
const hiddenByView = new WeakSet();
// Returns the models in the parts the view leaves out (those parts and everything in them).
export function arrange(doc, { show, hide, keep = [] }) {
  const left = new Set(), shown = new Set(), leave = (m) => { if (!left.has(m)) { left.add(m); kids(m).forEach(leave); } };
  const within = new Map();  // model -> holds a model marked with one of `show`
  const marked = (m) => show.some((cls) => hasClass(m, cls));
  const holds = (m) => {
    if (!within.has(m)) within.set(m, marked(m) || kids(m).some(holds));
    return within.get(m);
  };
  const setVisible = (m, on) => {
    if (!on && m.visible) { hiddenByView.add(m); m.visible = false; }
    else if (on && hiddenByView.has(m)) { hiddenByView.delete(m); m.visible = true; }
  };
  const walk = (m, inside) => {
    let on = keep.some((cls) => hasClass(m, cls)) || !hide.some((cls) => hasClass(m, cls));
    if (on && show && !inside) {
      if (marked(m)) inside = true;
      else on = holds(m);
    }
    setVisible(m, on);
    if (on) { shown.add(m); for (const k of kids(m)) walk(k, inside); } else leave(m);
  };
  for (const r of rootsOf(doc)) walk(r, false);
  for (const m of shown) left.delete(m);  // (a model in two parts, one shown)
  return left;
}
// The figures in the parts this view leaves out, and their parts (title, axes, legends, colour
// bars, annotations, glyphs): left as they are, styled when a view shows them again (a scene
// showed one figure of nine, and a key restyled all nine at its scale).
const PANELS = ["left", "right", "above", "below", "center", "renderers"];
export function figuresLeft(left) {
  const skip = new Set();
  for (const m of left) {
    if (!isFigure(m)) continue;
    skip.add(m);
    if (m.title && typeof m.title === "object") skip.add(m.title);
    for (const side of PANELS) for (const x of m[side] || []) if (x && typeof x === "object") { skip.add(x); if (x.glyph) skip.add(x.glyph); }
  }
  return skip;
}
