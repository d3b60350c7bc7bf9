// assets/js/bokeh-internals.js against stand-ins for BokehJS 3.9's root views: layout put off and
// done once, views found (and remembered while on the page), a Div's text set silently, the
// document decoded and rendered in two steps, a renderer keeping only the glyph it paints up to
// date, and each internal's fallback when it is missing.
import test from "node:test";
import assert from "node:assert/strict";
import { decodeDocument, deferLayout, hold, leanRenderers, releaseNow, setMarkup, viewOf, viewsIndexed } from "../../assets/js/bokeh-internals.js";
import { nodeDocument } from "./fixture.js";

function rootView(doc, views = new Map()) {
  const calls = [];
  const proto = { invalidate_layout() { calls.push("layout"); }, compute_layout() { calls.push("compute"); } };
  const v = Object.create(proto);
  Object.assign(v, { model: { document: doc }, owner: { find_one: (m) => views.get(m) || null }, calls });
  return v;
}

test("a restyle's many size changes lay the page out once, after", () => {
  const doc = {}, other = {};
  const mine = rootView(doc), theirs = rootView(other);
  globalThis.window = { Bokeh: { index: [mine, theirs] } };
  const done = deferLayout(doc);
  mine.invalidate_layout(); mine.invalidate_layout(); theirs.invalidate_layout();
  assert.deepEqual([mine.calls, theirs.calls], [[], ["layout"]]);
  done();
  assert.deepEqual(mine.calls, ["layout"]);
  assert.equal(Object.hasOwn(mine, "invalidate_layout"), false);  // the prototype's again
  delete globalThis.window;
  assert.doesNotThrow(() => deferLayout(doc)());  // no BokehJS (node, before render): nothing put off
});

test("nested, the outer deferral lays out; a resize's layout waits too; a removed view is not laid out", () => {
  const doc = {};
  const mine = rootView(doc);
  globalThis.window = { Bokeh: { index: [mine] } };
  const outer = deferLayout(doc);  // the parts set aside joining
  const inner = deferLayout(doc);  // a restyle meanwhile
  mine.invalidate_layout();
  inner();
  assert.deepEqual(mine.calls, []);  // still put off: the joins go on
  mine.compute_layout();  // a ResizeObserver's: a figure not laid out yet cannot be measured
  assert.deepEqual(mine.calls, []);
  outer();
  assert.deepEqual(mine.calls, ["layout"]);
  assert.equal(Object.hasOwn(mine, "compute_layout"), false);
  const gone = rootView(doc);
  gone.el = { isConnected: false };  // the page built ahead of time, swapped for the live one
  window.Bokeh.index = [gone];
  const done = deferLayout(doc);
  gone.invalidate_layout();
  done();
  assert.deepEqual(gone.calls, []);
  delete globalThis.window;
});

test("a model's view is found through the root views and remembered while on the page", () => {
  const m = {}, el = { isConnected: true };
  const view = { el };
  let asked = 0;
  const root = rootView({}, new Map([[m, view]]));
  const find = root.owner.find_one;
  root.owner.find_one = (x) => { asked++; return find(x); };
  globalThis.window = { Bokeh: { index: [root] } };
  assert.equal(viewOf(m), view);
  assert.equal(viewOf(m), view);
  assert.equal(asked, 1);
  el.isConnected = false;  // removed (a takeover): looked up again
  viewOf(m);
  assert.equal(asked, 2);
  assert.equal(viewOf({}), null);
  delete globalThis.window;
});

test("in viewsIndexed, lookups share one walk of the view tree; out of it, or without one, each walks", () => {
  const a = {}, b = {}, viewless = [{}, {}, {}];
  const va = { model: a, el: { isConnected: true } }, vb = { model: b, el: { isConnected: true } };
  const also = { model: a, el: { isConnected: true } };  // a second view of a: the first walked wins, as find_one's
  let walks = 0, finds = 0;
  const root = rootView({}, new Map([[a, va], [b, vb]]));
  root.owner.query = function* (pick) { walks++; for (const v of [va, vb, also]) if (pick(v)) yield v; };
  const find = root.owner.find_one;
  root.owner.find_one = (x) => { finds++; return find(x); };
  globalThis.window = { Bokeh: { index: [root] } };
  const got = viewsIndexed(() => [a, ...viewless, b, ...viewless].map(viewOf));
  assert.deepEqual(got, [va, null, null, null, vb, null, null, null]);
  assert.deepEqual([walks, finds], [1, 0]);
  assert.equal(viewsIndexed(() => viewsIndexed(() => viewOf({}))), null);  // nested: one walk
  assert.equal(walks, 2);
  viewOf({}); viewOf({});  // out of it: each lookup walks (find_one)
  assert.deepEqual([walks, finds], [2, 2]);
  assert.equal(viewsIndexed(() => 7), 7);
  delete root.owner.query;  // an older ViewManager: find_one per lookup, the same answers
  assert.deepEqual(viewsIndexed(() => [a, {}].map(viewOf)), [va, null]);
  assert.equal(finds, 3);  // a was remembered; {} looked up
  delete globalThis.window;
});

test("a Div's text goes into its element silently; without a view the caller sets it", () => {
  const div = { type: "Div", render_as_text: false, setv(p, o) { this.set = [p, o]; Object.assign(this, p); } };
  const dom = nodeDocument();
  const view = { el: { isConnected: true }, markup_el: dom.createElement("div") };
  globalThis.window = { Bokeh: { index: [rootView({}, new Map([[div, view]]))] } };
  assert.equal(setMarkup(div, "<b>1</b>"), true);
  assert.equal(view.markup_el.innerHTML, "<b>1</b>");
  assert.deepEqual(div.set, [{ text: "<b>1</b>" }, { silent: true }]);
  dom.changes.length = 0;
  assert.equal(setMarkup(div, "<b>1</b>"), true);  // the same text again: nothing touched
  assert.deepEqual(dom.changes, []);
  div.text = "<b>2</b>";  // set another way (a patch from Python): the element is brought to it
  assert.equal(setMarkup(div, "<b>1</b>"), true);
  assert.equal(view.markup_el.innerHTML, "<b>1</b>");
  assert.equal(setMarkup({ type: "Div", render_as_text: true, setv() {} }, "x"), false);
  delete globalThis.window;
});

test("hold_render is set only where it exists; a held figure printed is painted now", () => {
  const fig = { hold_render: false }, other = {};
  hold(fig, true); hold(other, true);
  assert.deepEqual([fig.hold_render, "hold_render" in other], [true, false]);
  let painted = 0;
  releaseNow({ model: fig, repaint: () => painted++ });
  assert.deepEqual([fig.hold_render, painted], [false, 1]);
});

test("the document is decoded, then rendered when asked; without BokehJS's Document, embed_item does both", async () => {
  const made = [];
  const Document = { from_json: (j) => ({ from: j }) };
  globalThis.window = { Bokeh: { require: () => ({ Document }), embed: { add_document_standalone: (d, el) => made.push([d, el]) } } };
  const { doc, render } = await decodeDocument({ doc: "json" }, "target");
  assert.deepEqual(doc, { from: "json" });
  assert.equal(made.length, 0);
  render();
  assert.deepEqual(made, [[doc, "target"]]);
  const rendered = { document: "the doc" };
  globalThis.window = { Bokeh: { embed: { embed_item: async () => ({ roots: [{ model: rendered }] }) } } };
  const fallback = await decodeDocument({ doc: "json" }, "target");
  assert.deepEqual(fallback, { doc: "the doc", render: null });
  delete globalThis.window;
});

// A stand-in for BokehJS 3.9's GlyphRendererView: a glyph view and the four it keeps beside it,
// each recording what was asked of it; _paint records which glyph it would draw.
function glyphRendererClass() {
  const glyph = (name, log) => ({
    async set_data() { log.push(`data ${name}`); }, set_visuals() { log.push(`visuals ${name}`); },
    after_visuals() {}, async after_lazy_visuals() {}, map_data() { log.push(`map ${name}`); },
  });
  class View {
    constructor() {
      this.log = [];
      for (const name of ["glyph", "decimated_glyph", "selection_glyph", "nonselection_glyph", "muted_glyph"]) this[name] = glyph(name, this.log);
      this.hover_glyph = null;
      this.selected = [];
      this.model = { muted: false, view: { indices: [0, 1] }, document: { interactive_duration: () => -1 },
        data_source: { selected: { is_empty: () => this.selected.length === 0 } } };
      this.plot_view = {};
      this.paints = [];
    }
    async set_data(indices) {  // BokehJS's: every glyph view, then the visuals
      for (const g of [this.glyph, this.decimated_glyph, this.selection_glyph, this.nonselection_glyph, this.muted_glyph]) await g.set_data(null, null, indices);
      await this.set_visuals();
    }
    async set_visuals() {
      for (const g of [this.glyph, this.decimated_glyph, this.selection_glyph, this.nonselection_glyph, this.muted_glyph]) g.set_visuals();
    }
    map_data() { for (const g of [this.glyph, this.decimated_glyph, this.selection_glyph, this.nonselection_glyph, this.muted_glyph]) g.map_data(); }
    _update_masked_indices() {}
    _paint() { this.map_data(); this.paints.push(this.selected.length ? "selection" : "glyph"); }
    request_paint() { this._paint(); }
  }
  return View;
}
const flush = () => new Promise((r) => setTimeout(r, 0));

test("a renderer set up in full then keeps only the glyph it paints up to date", async () => {
  const View = glyphRendererClass();
  globalThis.window = { Bokeh: { Models: { GlyphRenderer: { prototype: { default_view: View } } } } };
  assert.equal(leanRenderers(), true);
  assert.equal(leanRenderers(), false);  // once
  const v = new View();
  await v.set_data();  // BokehJS's lazy_initialize: every glyph view set up
  assert.equal(v.log.filter((l) => l.startsWith("data")).length, 5);
  v.log.length = 0;
  await v.set_data();  // a step's new data
  v._paint();
  assert.deepEqual(v.log, ["data glyph", "visuals glyph", "map glyph"]);
  assert.deepEqual(v.paints, ["glyph"]);
  delete globalThis.window;
});

test("a selection brings the other glyphs up to date before they are painted; muted, hovered or interacting renderers stay in full", async () => {
  const View = glyphRendererClass();
  globalThis.window = { Bokeh: { Models: { GlyphRenderer: { prototype: { default_view: View } } } } };
  leanRenderers();
  const v = new View();
  await v.set_data();
  await v.set_data();  // stale: only the glyph has this data
  v.log.length = 0;
  v.selected = [1];
  v._paint();  // the frame that would show the selection glyph waits for it
  assert.deepEqual(v.paints, []);
  await flush();
  assert.equal(v.log.filter((l) => l.startsWith("data")).length, 5);
  assert.deepEqual(v.paints, ["selection"]);
  for (const make of [(w) => { w.model.muted = true; }, (w) => { w.hover_glyph = w.glyph; },
    (w) => { w.model.document.interactive_duration = () => 10; }]) {
    const w = new View();
    await w.set_data();
    make(w);
    w.log.length = 0;
    await w.set_data();
    assert.equal(w.log.filter((l) => l.startsWith("data")).length, 5);
  }
  delete globalThis.window;
});

test("without GlyphRenderer's view methods nothing is changed", () => {
  globalThis.window = { Bokeh: { Models: { GlyphRenderer: { prototype: { default_view: class { set_data() {} } } } } } };
  assert.equal(leanRenderers(), false);
  globalThis.window = { Bokeh: {} };
  assert.equal(leanRenderers(), false);
  delete globalThis.window;
  assert.equal(leanRenderers(), false);
});
