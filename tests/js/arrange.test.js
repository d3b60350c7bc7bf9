// assets/js/arrange.js: which parts each view shows, by the role classes Python states
// (ui/contract.py): the presenter view's main views without the secondary parts, a named view
// alone, the settings folded, print without what does not print; and back exactly.
import test from "node:test";
import assert from "node:assert/strict";
import { arrange, kids, layoutWanted, viewNames } from "../../assets/js/arrange.js";
import { fakeDoc, loadConfig, model } from "./fixture.js";

const { contract } = loadConfig();
const R = contract.roles, view = (name) => contract.view_prefix + name;

function page() {
  const controls = model({ css_classes: [R.controls] });
  const drop = model({ css_classes: [R.present_drop] });  // a readout beside the main figure
  const main = model({ css_classes: [R.main_view, view("state")], children: [drop] });
  const aside = model({ css_classes: [R.secondary] });
  const link = model({ css_classes: [R.no_print] });
  const body = model({ children: [main, aside] });
  const top = model({ children: [controls, body, link] });
  return { top, controls, main, aside, drop, link, body, doc: fakeDoc([top, controls, body, main, aside, drop, link]) };
}
const visible = (p) => Object.fromEntries(["controls", "main", "aside", "drop", "link"].map((k) => [k, p[k].visible]));

test("the whole page shows everything", () => {
  const p = page();
  arrange(p.doc, layoutWanted(p.doc, false, {}));
  assert.deepEqual(visible(p), { controls: true, main: true, aside: true, drop: true, link: true });
});

test("the presenter view shows the main views, the settings folded away, and comes back exactly", () => {
  const p = page();
  arrange(p.doc, layoutWanted(p.doc, true, {}));
  assert.deepEqual(visible(p), { controls: false, main: true, aside: false, drop: true, link: false });
  arrange(p.doc, layoutWanted(p.doc, true, { drop: true }));  // a screen too small for all
  assert.equal(p.drop.visible, false);
  arrange(p.doc, layoutWanted(p.doc, true, { settings: true }));  // Settings pressed
  assert.equal(p.controls.visible, true);
  arrange(p.doc, layoutWanted(p.doc, false, {}));
  assert.deepEqual(visible(p), { controls: true, main: true, aside: true, drop: true, link: true });
});

test("a named view shows its part alone; an unknown name shows the whole page", () => {
  const p = page();
  assert.deepEqual(viewNames(p.doc), ["state"]);
  arrange(p.doc, layoutWanted(p.doc, false, { view: "state", fold: true }));
  assert.deepEqual(visible(p), { controls: false, main: true, aside: false, drop: true, link: false });
  const q = page();
  assert.deepEqual(layoutWanted(q.doc, false, { view: "nope" }), { show: null, hide: [], keep: [] });
});

test("print leaves out the settings and what does not print, and shows the rest", () => {
  const p = page();
  arrange(p.doc, layoutWanted(p.doc, false, { print: true }));
  assert.deepEqual(visible(p), { controls: false, main: true, aside: true, drop: true, link: false });
});

test("a model hidden by the page itself stays hidden when a view lets go of it", () => {
  const p = page();
  p.aside.visible = false;  // the page's own choice, not the view's
  arrange(p.doc, layoutWanted(p.doc, true, {}));
  arrange(p.doc, layoutWanted(p.doc, false, {}));
  assert.equal(p.aside.visible, false);
});

test("a layout's parts: children as a list, a map or an object, and a single child", () => {
  const a = model({}), b = model({}), c = model({});
  assert.deepEqual(kids({ children: [a, [b]] }), [a, b]);
  assert.deepEqual(kids({ children: new Map([["x", a]]) }), [a]);
  assert.deepEqual(kids({ children: { x: a, y: b }, child: c }), [a, b, c]);
  assert.deepEqual(kids({ children: ["text", 3] }), []);
});

test("a named view in the presenter view (a scene) shows its part, secondary or not; it may leave out what is inside it, never itself", () => {
  const scene = model({ css_classes: [R.secondary, view("cost")] });
  const inner = model({ css_classes: [R.secondary] }), drop = model({ css_classes: [R.present_drop] });
  const readout = model({ css_classes: [R.present_drop] });
  const main = model({ css_classes: [R.main_view], children: [drop] });
  const holder = model({ css_classes: [view("tokens")], children: [inner, readout] });
  const alone = model({ css_classes: [R.main_view, R.present_drop, view("outputs")] });
  const top = model({ children: [main, scene, holder, alone] });
  const doc = fakeDoc([top, main, drop, scene, holder, inner, readout, alone]);
  arrange(doc, layoutWanted(doc, true, { view: "cost" }));  // ?present=1&view=cost
  assert.deepEqual([main.visible, scene.visible, holder.visible], [false, true, false]);
  arrange(doc, layoutWanted(doc, true, { view: "tokens", drop: true }));
  assert.deepEqual([holder.visible, inner.visible, readout.visible, scene.visible], [true, true, false, false]);
  arrange(doc, layoutWanted(doc, true, { view: "outputs", drop: true }));
  assert.equal(alone.visible, true);
  arrange(doc, layoutWanted(doc, true, { drop: true }));  // the overview: no secondary, drop left out
  assert.deepEqual([main.visible, drop.visible, scene.visible, holder.visible, alone.visible], [true, false, false, false, false]);
});
