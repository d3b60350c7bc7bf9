// assets/js/keys.js: each key press does one thing, and a focused control keeps its own keys.
import test from "node:test";
import assert from "node:assert/strict";
import { ACTIONS, actionFor, ownedByControl } from "../../assets/js/keys.js";

const el = (tagName, attrs = {}, extra = {}) => ({
  nodeType: 1, tagName, getAttribute: (k) => attrs[k] ?? null, classList: { contains: (c) => (extra.classes || []).includes(c) }, ...extra,
});
const press = (key, target, more = {}) => ({ key, composedPath: () => (target ? [target] : []), ...more });

test("a text field keeps every key; a slider its arrows and Space, not p or t; a button Space and Enter", () => {
  const text = el("INPUT", { type: "text" }), slider = el("INPUT", { type: "range" }), button = el("BUTTON");
  const handle = el("DIV", {}, { classes: ["noUi-handle"] });
  assert.equal(ownedByControl(press("p", text)), true);
  for (const k of ["ArrowLeft", "ArrowRight", "Home", " "]) assert.equal(ownedByControl(press(k, slider)), true, k);
  assert.equal(ownedByControl(press("p", slider)), false);
  assert.equal(ownedByControl(press("ArrowRight", handle)), true);
  assert.equal(ownedByControl(press(" ", button)), true);
  assert.equal(ownedByControl(press("Enter", button)), true);
  assert.equal(ownedByControl(press("ArrowRight", button)), false);
  assert.equal(ownedByControl(press("r", null)), false);
  assert.equal(ownedByControl(press("x", el("DIV", {}, { isContentEditable: true }))), true);
});

test("the keys' actions: stepping only once there is something to step, the rest always", () => {
  const ready = { dialogOpen: false, stepping: true }, early = { dialogOpen: false, stepping: false };
  assert.equal(actionFor(press("ArrowRight"), ready), ACTIONS.ArrowRight);
  assert.equal(actionFor(press("ArrowRight"), early), null);
  assert.equal(actionFor(press("t"), early), ACTIONS.t);  // the theme works before the plots
  assert.equal(actionFor(press("x"), ready), null);
});

test("modifiers, a held Space and an open dialog leave the keys alone (but ? closes the help)", () => {
  const ready = { dialogOpen: false, stepping: true };
  assert.equal(actionFor(press("r", null, { ctrlKey: true }), ready), null);
  assert.equal(actionFor(press(" ", null, { repeat: true }), ready), null);
  assert.equal(actionFor(press("ArrowRight", null, { repeat: true }), ready), ACTIONS.ArrowRight);  // held: steps on
  assert.equal(actionFor(press("r"), { dialogOpen: true, stepping: true }), null);
  assert.equal(actionFor(press("?"), { dialogOpen: true, stepping: true }), ACTIONS["?"]);
});

test("0-9 pick a presenter scene, in the presenter view only", () => {
  const present = { dialogOpen: false, stepping: false, present: true }, page = { dialogOpen: false, stepping: true };
  for (const k of "0123456789") {
    assert.equal(actionFor(press(k), present), ACTIONS[k], k);  // before the plots step, too
    assert.equal(actionFor(press(k), page), null, k);
  }
  assert.equal(actionFor(press("1", el("INPUT", { type: "text" })), present), null);  // typed in a field
});
