// Every BokehJS internal the shell and the player reach into, in one place. Each was checked
// against BokehJS 3.9.2 (the version build.py ships); each says what it gains and what happens
// without it (the fallback, taken when the internal is missing or throws), so a new BokehJS
// that changes one costs speed, never the page.
// Elsewhere: the build patches bokeh.min.js itself (sitebuild/bokehjs.py: BOKEHJS_PATCHES, each
// matched exactly once or the build stops): the MathJax loader emptied, a stylesheet written
// only when it changes, an overlay-only repaint that does not re-measure side panels, a held
// figure not laid out, no --bk-* CSS variable reads. ui/worker.py and ui/panel_private.py (in
// the worker) make and read the JSON patches below with Panel's own functions. Nothing here
// runs on import.
import { morph } from "./morph.js";

const bokeh = () => (typeof window !== "undefined" && window.Bokeh) || null;

// [3.9.2] doc.all_models (a Set of every model of a document). Public in use, private in name. Gains:
// walking a document without a model graph walk of our own. Fallback: none needed in 3.x; a
// document without it is read as having no models (nothing is restyled or culled).
export const allModels = (doc) => (doc && doc.all_models ? [...doc.all_models] : []);

// [3.9.2] doc.roots: a method in 3.x, a list in older builds (and in the tests' fakes).
export function rootsOf(doc) {
  const r = doc && (typeof doc.roots === "function" ? doc.roots() : doc.roots);
  return r ? [...r] : [];
}

// [3.9.2] Bokeh.index: every root view on the page. Gains: finding a model's view without asking each
// document. Fallback: an empty list (no culling, no text alternatives, no fit measurement).
export function rootViews() { const b = bokeh(); return b && b.index ? [...b.index] : []; }

// [3.9.2] A model's view: rootView.owner.find_one(model) (ViewManager, 3.x). Remembered while its
// element is on the page. Gains: the figures' elements (culling, labels, text alternatives,
// the presenter fit's measurements). Fallback: null (that model is left alone).
// viewsIndexed(fn): fn's lookups share one walk of the view tree (root.owner.query; find_one
// walks it whole even to find one). Gains: loops over a document's models, most without a view,
// walked it once per model: 40-90 ms of gates' first paint (CPU profile). Only for loops that
// build and remove no view (BokehJS builds them across promises). Fallback: find_one per lookup.
const views = new WeakMap();
let index = null;  // in viewsIndexed: false until walked, then model -> view
export function viewOf(model) {
  let view = views.get(model);
  if (view && view.el && view.el.isConnected) return view;
  if (index === false) index = walkViews();
  view = index ? index.get(model) || null : findView(model);
  if (view) views.set(model, view);
  return view;
}
function findView(model) {
  for (const r of rootViews()) { const v = r.owner && typeof r.owner.find_one === "function" && r.owner.find_one(model); if (v) return v; }
  return null;
}
function walkViews() {
  const roots = rootViews(), all = new Map();
  if (!roots.every((root) => root.owner && typeof root.owner.query === "function")) return null;
  for (const root of roots) for (const view of root.owner.query(() => true)) if (!all.has(view.model)) all.set(view.model, view);
  return all;
}
export function viewsIndexed(fn) {
  if (index !== null) return fn();  // nested: the outer walk serves
  index = false;
  try { return fn(); } finally { index = null; }
}

// Root views that show a given document; every document on screen.
export const rootViewsOf = (doc) => rootViews().filter((v) => v.model && v.model.document === doc);
export const documentsOnScreen = () => new Set(rootViews().map((v) => v.model.document));

// [3.9.2] model.hold_render (a Plot property since 3.2): a held figure takes changes but does not
// repaint. Gains: a step repaints only the figures near the view (running-sum's eight figures,
// gates' twelve). Fallback: a model without it is never held (every figure keeps painting).
export const isFigure = (model) => "renderers" in model && "toolbar" in model;
export function hold(model, on) {
  if ("hold_render" in model && model.hold_render !== on) model.hold_render = on;
}
// [3.9.2] ... and a held figure painted now (view.repaint(), not the next animation frame): printing.
export function releaseNow(view) {
  if (!view.model.hold_render) return;
  view.model.hold_render = false;
  if (typeof view.repaint === "function") view.repaint();
}

// [3.9.2] A figure's size as last laid out: its box and its frame's (view.bbox, view.frame.bbox,
// PlotView). Gains: the presenter view sizes the numbers in a heatmap's cells to its cells.
// Fallback: null (the numbers scale with the figure).
export function laidOut(model) {
  const v = viewOf(model), box = v && v.bbox, frame = v && v.frame && v.frame.bbox;
  return box && frame && frame.width > 0 && frame.height > 0
    ? { width: box.width, height: box.height, frameWidth: frame.width, frameHeight: frame.height, frameLeft: frame.left } : null;
}

// [3.9.2] Layout put off: each root view's invalidate_layout is shadowed for the duration of a restyle
// (or of the parts set aside joining) and called once after. BokehJS lays the page out again on
// every change of a size; a restyle makes dozens (gates' presenter restyle: 1.0-1.7 s -> 60-130
// ms, measured). A root's compute_layout (a resize calls it alone) waits too: a figure not yet
// laid out cannot be measured. Nested, the outer one lays out; a view removed meanwhile is not
// laid out. Fallback: with no root views (node, before render) nothing is put off.
export function deferLayout(doc) {
  const roots = rootViewsOf(doc).filter((v) => !Object.prototype.hasOwnProperty.call(v, "invalidate_layout"));
  const pending = new Set();
  for (const v of roots) {  // shadows the prototype's
    v.invalidate_layout = () => pending.add(v);
    v.compute_layout = () => pending.add(v);
  }
  return () => {
    for (const v of roots) { delete v.invalidate_layout; delete v.compute_layout; }
    for (const v of pending) if (!v.el || v.el.isConnected) v.invalidate_layout();
  };
}

// [3.9.2] view.r_after_render(): a layout whose children change calls it on every child view,
// built long before or not (Panel's Column.update_children, Bokeh's LayoutDOMView). Shadowed by
// a no-op on `views` until the returned function is called. Gains: a part joining the page
// does not re-run after_render over every part that joined before it (gates: update_children
// 400 ms of the joins' main-thread time, mostly after_render of parts already on screen).
// Fallback: a view without it is left as it is (its after_render runs again, as before).
export function quietAfterRender(views) {
  const quiet = views.filter((v) => v && typeof v.r_after_render === "function"
    && !Object.prototype.hasOwnProperty.call(v, "r_after_render"));
  for (const v of quiet) v.r_after_render = () => {};
  return () => { for (const v of quiet) delete v.r_after_render; };
}

// [3.9.2] GlyphRendererView's set_data, set_visuals and map_data (Bokeh.Models.GlyphRenderer's
// default_view). BokehJS keeps five glyph views beside a renderer's glyph (decimated, selection,
// nonselection, muted, hover if given) and brings all of them up to date on every change of
// data, and maps all of them on every paint, though a renderer with nothing selected, not
// muted, with no hover glyph and no interaction under way paints its glyph alone. Leaned: once
// set up in full, such a renderer keeps only its glyph up to date; the others are brought up to
// date by BokehJS's own methods before a paint that could show them (that paint waits for
// them). Gains: a step's main-thread JavaScript on running-sum 11.5 -> 8.5 ms (CPU profile, every
// figure in view, two runs each way). Fallback: without those methods, nothing is changed (every
// glyph view is kept up to date, as before).
export function leanRenderers() {
  const b = bokeh(), model = b && b.Models && b.Models.GlyphRenderer;
  const proto = model && model.prototype.default_view && model.prototype.default_view.prototype;
  if (!proto || proto.labLean || !["set_data", "set_visuals", "map_data", "_paint"]
    .every((name) => typeof proto[name] === "function")) return false;
  const full = { setData: proto.set_data, setVisuals: proto.set_visuals, mapData: proto.map_data,
    paint: proto._paint };
  const lean = (view) => view.labSetUp && view.hover_glyph == null && !view.model.muted
    && view.model.data_source.selected.is_empty()
    && !(view.model.document && view.model.document.interactive_duration() > 0);
  Object.assign(proto, {
    labLean: true,
    async set_data(indices) {
      if (!lean(this)) { this.labStale = false; await full.setData.call(this, indices); this.labSetUp = true; return; }
      const source = this.model.data_source;
      this.all_indices = this.model.view.indices;
      await this.glyph.set_data(source, this.all_indices, indices);
      this.labStale = true;
      await this.set_visuals();
      this._update_masked_indices();
      this.plot_view.invalidate_dataranges = true;
    },
    async set_visuals() {
      if (!lean(this)) return full.setVisuals.call(this);
      this.labStale = true;
      this.glyph.set_visuals(this.model.data_source, this.all_indices);
      this.glyph.after_visuals();
      await this.glyph.after_lazy_visuals();
    },
    map_data() {
      if (lean(this)) this.glyph.map_data();
      else full.mapData.call(this);
    },
    _paint(ctx) {
      if (this.labStale && !lean(this)) {  // a selection, mute or interaction: the others first
        this.labStale = false;
        this.labCatchingUp = full.setData.call(this)
          .finally(() => { this.labCatchingUp = null; this.request_paint(); });
      }
      if (!this.labCatchingUp) full.paint.call(this, ctx);
    },
  });
  return true;
}

// [3.9.2] A Div's text straight into its view's element (view.markup_el), the model told silently
// (setv(..., {silent: true})), changing only the nodes that differ (morph.js; the same text
// again changes nothing). Gains: a readout's new text without BokehJS re-rendering the Div
// and laying out the page (20-60 ms a readout, measured). Fallback: false (the caller sets
// the model's text the public way).
export function setMarkup(model, text) {
  const view = model.type === "Div" && !model.render_as_text ? viewOf(model) : null;
  if (!view || !view.markup_el || typeof model.setv !== "function") return false;
  if (model.text === text && shownMarkup.get(view.markup_el) === text) return true;
  model.setv({ text }, { silent: true });
  morph(view.markup_el, text);
  shownMarkup.set(view.markup_el, text);
  return true;
}
const shownMarkup = new WeakMap();  // element -> the text morph last put in it

// [3.9.2] The document built ahead of time, decoded (Bokeh.require("document").Document.from_json) and
// rendered by Bokeh.embed.add_document_standalone: the page is themed and styled, and parts
// set aside, between the two (each change after rendering cost another layout and paint).
// Fallback: Bokeh.embed.embed_item, which decodes and renders in one call (then nothing is set
// aside or held before the first render). Returns {doc, render(el) | null}.
export async function decodeDocument(item, target) {
  const b = bokeh();
  const Document = typeof b.require === "function" && b.require("document").Document;
  const standalone = Document && b.embed.add_document_standalone;
  if (standalone) {
    const doc = Document.from_json(item.doc);
    return { doc, render: () => standalone(doc, target) };
  }
  const doc = (await b.embed.embed_item(item)).roots[0].model.document;
  return { doc, render: null };
}

// [3.9.2] Lets go of a page swapped out: the views rendered inside el (view.remove()), and its
// document from Bokeh.documents, where BokehJS keeps every document it made for good (hybrid's
// had stayed: two documents of 353 models each). Fallback: the list left as it is.
export function letGo(el, doc) {
  for (const view of rootViews()) if (view.el && el.contains(view.el)) view.remove();
  const list = bokeh() && bokeh().documents, i = Array.isArray(list) && doc ? list.indexOf(doc) : -1;
  if (i >= 0) list.splice(i, 1);
}

// [3.9.2] The document's on_change, wrapped: Panel's link (panel.io.pyodide._link_docs) registers its
// callback through it, so what it is given can be filtered or delayed. Fallback: a document
// without on_change is left as it is (the player's own changes then reach Python too).
export function wrapOnChange(jsdoc, wrap) {
  if (typeof jsdoc.on_change !== "function") return;
  const onChange = jsdoc.on_change.bind(jsdoc);
  jsdoc.on_change = (callback, ...rest) => onChange(wrap(callback), ...rest);
}

// [3.9.2] doc.create_json_patch(events) and doc.apply_json_patch(patch, buffers): the document's
// changes as Bokeh's JSON patch, and a patch applied (what Panel's worker mode posts both ways,
// panel/_templates/pyodide_handler.js). Gains: the two documents, here and in the worker, stay
// one. Fallback: none; no setting can reach Python (the page built ahead of time still steps).
export const createPatch = (doc, events) => doc.create_json_patch(events);
export const applyPatch = (doc, patch, buffers) => doc.apply_json_patch(patch, buffers);

// [3.9.2] A Tabs view's parts: view.headers_wrapper_el (the row of headers), view.header_els (one
// div per tab, focusable, no role) and view.child_views (the panels, in the same shadow root).
// Gains: the headers made a real tab set (tabs.js). Fallback: null (the tabs stay clickable).
export function tabParts(model) {
  const view = viewOf(model);
  if (!view || !view.headers_wrapper_el || !Array.isArray(view.header_els)) return null;
  return { list: view.headers_wrapper_el, tabs: view.header_els,
    panels: (view.child_views || []).map((v) => v && v.el) };
}

// [3.9.2] A figure's events layer (view.canvas_view.events_el), made a tab stop by BokehJS
// for tools that take keys (the edit tools; none here). Fallback: null (the canvas stays one).
export const eventsLayer = (model) => {
  const view = viewOf(model);
  return (view && view.canvas_view && view.canvas_view.events_el) || null;
};
