// assets/js/offline.js and culling.js: "Saved for offline use" said once, for this build only;
// a figure near the view is painted, one far from it held.
import test from "node:test";
import assert from "node:assert/strict";
import { holdUnseen, NEAR_PX, nearView } from "../../assets/js/culling.js";
import { offlineSaved } from "../../assets/js/offline.js";
import { state } from "../../assets/js/state.js";
import { fakeDoc, fakeDocument, loadConfig, model } from "./fixture.js";

const config = loadConfig();
const elements = fakeDocument();

test("only this build's worker, having kept every file, makes the page say it is saved, once", () => {
  assert.equal(offlineSaved({ type: "lab-saved", build: "another", saved: true }), false);
  assert.equal(offlineSaved({ type: "lab-saved", build: config.build, saved: false }), false);
  assert.equal(offlineSaved({ type: "something" }), false);
  assert.equal(state.offline, false);
  assert.equal(offlineSaved({ type: "lab-saved", build: config.build, saved: true }), true);
  assert.equal(state.offline, true);
  assert.equal(elements["lab-offline"].hidden, false);
  assert.match(elements["lab-offline-state"].textContent, /^Saved for offline use/);
  assert.equal(offlineSaved({ type: "lab-saved", build: config.build, saved: true }), false);  // once
});

test("a figure within NEAR_PX of the view is near; one further away is not", () => {
  const at = (top, left = 0) => ({ getBoundingClientRect: () => ({ top, bottom: top + 300, left, right: left + 400 }) });
  const box = { width: 1280, height: 800 };
  assert.equal(nearView(at(100), box), true);
  assert.equal(nearView(at(800 + NEAR_PX - 1), box), true);
  assert.equal(nearView(at(800 + NEAR_PX + 1), box), false);
  assert.equal(nearView(at(-300 - NEAR_PX + 1), box), true);
  assert.equal(nearView(at(-300 - NEAR_PX - 1), box), false);
  assert.equal(nearView(at(0, 1280 + NEAR_PX + 1), box), false);
});

test("figures with no view yet are held (they join later); other models are left alone", () => {
  const fig = model({ renderers: [], toolbar: {}, hold_render: false }), div = model({ text: "" });
  holdUnseen(fakeDoc([fig, div]));
  assert.equal(fig.hold_render, true);
  assert.equal("hold_render" in div, false);
});
