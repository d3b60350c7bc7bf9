// assets/js/progress.js, python.js, transport.js: the start-up line in numbers, what the shell
// tells the worker (the page on screen only if the link asked for no settings of its own),
// which changes wait for it, and a link's speed offered in the list.
import test from "node:test";
import assert from "node:assert/strict";
import { counted, progressPackages, progressRuntime, stage } from "../../assets/js/progress.js";
import { applySettings, coalesce, csv, pageInfo } from "../../assets/js/python.js";
import { readLink } from "../../assets/js/link.js";
import { player } from "../../assets/js/player.js";
import { state } from "../../assets/js/state.js";
import { speedFromLink } from "../../assets/js/transport.js";
import { fakeDocument, loadConfig } from "./fixture.js";

const config = loadConfig();
const elements = fakeDocument();

test("the runtime's download and the packages are counted in MB and wheels, on one bar", () => {
  readLink("");
  counted.core = 2_500_000;
  progressRuntime();
  assert.equal(state.stage, "runtime");
  assert.equal(elements["lab-stage"].textContent, "Getting the settings ready…");  // in plain words
  assert.equal(elements["lab-figures"].textContent, "downloading the Python runtime 2.5 / 10.0 MB");
  assert.equal(elements["lab-bar"].style.width, "11%");  // 0.45 * 2.5 / 10
  counted.wheelFiles = 5; counted.wheels = 4_000_000;
  progressPackages();
  assert.equal(elements["lab-figures"].textContent, "installing packages 5 / 10 · 4.0 / 20.0 MB");
  assert.equal(elements["lab-bar"].style.width, "63%");  // 0.45 + 0.35 * 5 / 10
  stage("done", "Ready", "", 1);
  assert.deepEqual([elements["lab-stage"].textContent, elements["lab-bar"].style.width], ["Ready", "100%"]);
});

test("the worker may adopt the page on screen only when it is there and the link asked for no settings of its own", async () => {
  player.doc = { all_models: new Set([{ id: "p1001" }, { id: "p1002" }]) };
  readLink("");
  assert.equal(pageInfo("").ids, null);  // not on screen yet
  state.prerendered = true;  // (first-paint.js's, set here by hand)
  assert.deepEqual(pageInfo("?t=3"), { search: "?t=3", ids: ["p1001", "p1002"], defaults: config.link.defaults, t: player.t });
  readLink(`?${config.link.settings[0]}=surely-not-the-default`);
  assert.equal(pageInfo("").ids, null);  // the live page is another one: rendered anew
  state.prerendered = false;
  assert.equal(await applySettings("d=4"), null);  // Python not live: the caller opens a link instead
  assert.equal(await csv(), null);
});

test("a change made while the worker computes supersedes the same setting's waiting one, and keeps the order", () => {
  const d = {}, seed = {};
  let q = [];
  q = coalesce(q, { kind: "ModelChanged", model: d, attr: "value", new: 5 });
  q = coalesce(q, { kind: "ModelChanged", model: seed, attr: "value", new: 1 });
  q = coalesce(q, { kind: "MessageSent", model: d });  // a click: never dropped
  q = coalesce(q, { kind: "ModelChanged", model: d, attr: "value", new: 7 });
  q = coalesce(q, { kind: "ModelChanged", model: d, attr: "value_throttled", new: 7 });
  assert.deepEqual(q.map((e) => [e.kind, e.model === d ? "d" : "seed", e.attr, e.new]), [
    ["ModelChanged", "seed", "value", 1], ["MessageSent", "d", undefined, undefined],
    ["ModelChanged", "d", "value", 7], ["ModelChanged", "d", "value_throttled", 7]]);
});

test("a link's speed that is not in the list is added to it and chosen", () => {
  const options = [{ value: "2" }, { value: "8" }];
  const select = { options, value: "8", add(o) { options.push(o); } };
  globalThis.Option = function (text, value) { this.text = text; this.value = value; };
  speedFromLink(select, "0.5");
  assert.deepEqual([select.value, options.length, options[2].text], ["0.5", 3, "0.5 / s"]);
  speedFromLink(select, "2");
  assert.deepEqual([select.value, options.length], ["2", 3]);
});
