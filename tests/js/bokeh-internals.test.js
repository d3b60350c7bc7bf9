// assets/js/bokeh-internals.js against stand-ins for BokehJS 3.9's root views: layout put off and
// done once, views found (and remembered while on the page), a Div's text set silently, the
// document decoded and rendered in two steps, and each internal's fallback when it is missing.
import test from "node:test";
import assert from "node:assert/strict";
import { decodeDocument, deferLayout, hold, releaseNow, setMarkup, viewOf } from "../../assets/js/bokeh-internals.js";
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
