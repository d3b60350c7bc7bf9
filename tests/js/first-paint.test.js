// assets/js/first-paint.js: what the first render sets aside (to join one part a frame after the
// first paint): everything after the first main view; in the presenter view only what follows
// the last; for a named view every part that does not hold it.
import test from "node:test";
import assert from "node:assert/strict";
import { setAside } from "../../assets/js/first-paint.js";
import { state } from "../../assets/js/state.js";
import { fakeDoc, loadConfig, model } from "./fixture.js";

const { contract } = loadConfig();
const R = contract.roles;

function page() {
  const controls = model({ css_classes: [R.controls] });
  const first = model({ css_classes: [R.main_view, contract.view_prefix + "state"] });
  const second = model({ css_classes: [R.main_view] });
  const figures = model({});
  const exercise = model({});
  const top = model({ children: [controls, first, second, figures, exercise] });
  return { top, controls, first, second, figures, exercise, doc: fakeDoc([top, controls, first, second, figures, exercise]) };
}

test("the first render keeps the settings and the first main view; the rest waits, in order", () => {
  const p = page();
  const aside = setAside(p.doc, { view: "", present: false });
  assert.deepEqual(p.top.children, [p.controls, p.first]);
  assert.equal(aside.length, 1);
  const [[parent, all, kept]] = aside;
  assert.equal(parent, p.top);
  assert.deepEqual(all, [p.controls, p.first, p.second, p.figures, p.exercise]);
  assert.deepEqual([...kept], [p.controls, p.first]);
  assert.equal(state.mainAside, true);  // the presenter fit waits for the second main view
});

test("the presenter view keeps every main view; only what follows the last waits", () => {
  const p = page();
  setAside(p.doc, { view: "", present: true });
  assert.deepEqual(p.top.children, [p.controls, p.first, p.second]);
  assert.equal(state.mainAside, false);
});

test("a named view is rendered alone; an unknown name keeps the whole page", () => {
  const p = page();
  setAside(p.doc, { view: "state", present: false });
  assert.deepEqual(p.top.children, [p.first]);
  const q = page();
  assert.deepEqual(setAside(q.doc, { view: "nope", present: false }), []);
  assert.equal(q.top.children.length, 5);
});

test("a page with no main view is rendered whole", () => {
  const a = model({}), b = model({});
  const top = model({ children: [a, b] });
  assert.deepEqual(setAside(fakeDoc([top, a, b]), { view: "", present: false }), []);
  assert.deepEqual(top.children, [a, b]);
});

test("a part set aside with several figures in it joins a child at a time; one with a figure or none joins whole", () => {
  const figure = () => model({ renderers: [], toolbar: {} });
  const [f1, f2, f3, f4] = [figure(), figure(), figure(), figure()];
  const row = model({ children: [f2, f3] });
  const views = model({ children: [f1, row] });  // three figures: split
  const one = model({ children: [model({}), f4] });  // one figure: whole
  const exercise = model({ children: [model({}), model({})] });  // none: whole
  const controls = model({ css_classes: [R.controls] });
  const first = model({ css_classes: [R.main_view] });
  const top = model({ children: [controls, first, views, one, exercise] });
  const aside = setAside(fakeDoc([top, controls, first, views, one, exercise]), { view: "", present: false });
  assert.deepEqual(top.children, [controls, first]);
  assert.deepEqual(views.children, [f1]);  // joins with its first child, the rest after it
  assert.deepEqual(row.children, [f2]);
  assert.equal(one.children.length, 2);
  assert.equal(exercise.children.length, 2);
  // in join order: the page's parts, then the split part's children, then the row's
  // (split: its joins leave the after_render of the children before them as it is)
  assert.deepEqual(aside.map(([parent, all, kept, split]) => [parent, all.length, kept.size, split]),
    [[top, 5, 2, false], [views, 2, 1, true], [row, 2, 1, true]]);
});
