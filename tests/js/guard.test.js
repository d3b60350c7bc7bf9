// assets/js/guard.js: what reaches Python. The player's own changes never do; a click right
// after a value change waits until Panel has sent the change.
import test from "node:test";
import assert from "node:assert/strict";
import { guard, PANEL_HOLD_MS } from "../../assets/js/guard.js";

function linked(player) {
  const sent = [], delayed = [];
  const jsdoc = { on_change(cb) { this.cb = cb; } };
  guard(player, jsdoc, (fn, ms) => delayed.push([fn, ms]));
  jsdoc.on_change((e) => sent.push(e));  // Panel's link registers through the wrapped on_change
  return { sent, delayed, emit: (e) => jsdoc.cb(e) };
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

test("a click within Panel's hold after a change is delayed by what is left of it; later, sent at once", () => {
  const { sent, delayed, emit } = linked({ applying: false, bound: new Set() });
  emit({ kind: "ModelChanged", model: {} });
  emit({ kind: "MessageSent", model: {} });
  assert.equal(sent.length, 1);
  assert.equal(delayed.length, 1);
  assert.ok(delayed[0][1] > PANEL_HOLD_MS - 100 && delayed[0][1] <= PANEL_HOLD_MS, String(delayed[0][1]));
  delayed[0][0]();
  assert.deepEqual(sent.map((e) => e.kind), ["ModelChanged", "MessageSent"]);
});

test("a document without on_change is left as it is", () => {
  const jsdoc = {};
  guard({ applying: false, bound: new Set() }, jsdoc);
  assert.deepEqual(jsdoc, {});
});
