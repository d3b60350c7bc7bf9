// assets/js/guard.js: what reaches Python. The player's own changes never do; the rest goes
// at once, in order.
import test from "node:test";
import assert from "node:assert/strict";
import { guard } from "../../assets/js/guard.js";

function linked(player) {
  const sent = [];
  const jsdoc = { on_change(cb) { this.cb = cb; } };
  guard(player, jsdoc);
  jsdoc.on_change((e) => sent.push(e));  // the worker's link registers through the wrapped on_change
  return { sent, emit: (e) => jsdoc.cb(e) };
}

test("changes to a bound model, or made while the player applies, stay in the browser", () => {
  const span = {};
  const player = { applying: false, bound: new Set([span]) };
  const { sent, emit } = linked(player);
  emit({ kind: "ModelChanged", model: span });
  player.applying = true;
  emit({ kind: "ModelChanged", model: {} });
  player.applying = false;
  const widget = {};
  emit({ kind: "ModelChanged", model: widget });
  assert.deepEqual(sent.map((e) => e.model), [widget]);
});

test("a click right after a value change goes at once, after it (the worker keeps the order)", () => {
  const { sent, emit } = linked({ applying: false, bound: new Set() });
  emit({ kind: "ModelChanged", model: {} });
  emit({ kind: "MessageSent", model: {} });
  assert.deepEqual(sent.map((e) => e.kind), ["ModelChanged", "MessageSent"]);
});

test("a document without on_change is left as it is", () => {
  const jsdoc = {};
  guard({ applying: false, bound: new Set() }, jsdoc);
  assert.deepEqual(jsdoc, {});
});
