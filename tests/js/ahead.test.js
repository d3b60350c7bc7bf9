// assets/js/ahead.js: a setting answered ahead of time (running-sum's preset), chosen before
// Python, goes into the document on screen as the build's patches (the way back from the run on
// screen, then the way to the chosen one), one choice after another; a run that cannot be loaded
// is asked of Python, the choice kept; the page's own settings link finds its run too. Two
// settings changed together (hybrid's models) have no run: Python is asked, and the page says so.
import test from "node:test";
import assert from "node:assert/strict";
import { choiceOf, choose, entryOf, runFor, runOfLink, watchAhead, withChoice } from "../../assets/js/ahead.js";
import { useConfig } from "../../assets/js/config.js";
import { readLink } from "../../assets/js/link.js";
import { player } from "../../assets/js/player.js";
import { state, timings } from "../../assets/js/state.js";
import { fakeDocument, fakeDoc, loadConfig, model, source } from "./fixture.js";

const config = loadConfig();
const elements = fakeDocument();
elements["tp-speed"] = { value: "8" };
globalThis.history = { replaceState: (_, __, url) => { globalThis.location.search = new URL(url, "http://x").search; } };
globalThis.location = { pathname: "/running-sum.html", search: "", hash: "", href: "http://x/running-sum.html" };
const listeners = {};
document.addEventListener = (type, fn) => { (listeners[type] ??= new Set()).add(fn); };
document.removeEventListener = (type, fn) => { listeners[type]?.delete(fn); };
const [worked, yours] = config.prebuilt;
const AHEAD = config.contract.roles.ahead;

// The page on screen: its frames and its preset's button group; patches are recorded.
function page() {
  const preset = model({ labels: ["random tokens", "worked example", "your turn"], active: 0, css_classes: [AHEAD] });
  const frames = Object.assign(source({ t: [0, 1, 2] }), { name: config.contract.frames.source, tags: [{ bindings: [] }] });
  const doc = fakeDoc([frames, preset]);
  doc.patches = [];
  doc.apply_json_patch = (patch) => doc.patches.push(patch.name);
  doc.on_change = (fn) => { doc.heard = fn; };
  player.attach(doc);
  return { doc, preset };
}
const files = { [worked.file]: { csv: "worked", patch: { name: "to worked" }, back: { name: "worked back" } },
  [yours.file]: { csv: "yours", patch: { name: "to yours" }, back: { name: "yours back" } } };
const asked = [];
globalThis.fetch = async (url) => {
  asked.push(url);
  return files[url] ? { ok: true, json: async () => files[url] } : { ok: false, status: 404 };
};

test("a widget's choice in its own words, and the run each choice is", () => {
  const { preset } = page();
  const entry = entryOf(preset);
  assert.equal(entry.setting, "preset");
  assert.deepEqual(["random tokens", "worked example", "your turn"].map((c) => runFor(entry, c)), [null, worked, yours]);
  assert.equal(runFor(entry, "nonsense"), undefined);
  assert.equal(choiceOf(preset), "random tokens");
  assert.equal(choiceOf({ value: "a", options: ["a", "b"] }), "a");  // a select
  assert.equal(choiceOf({ value: "b", options: [["a", "A"], ["b", "B"]] }), "B");  // (Panel's: value, label)
  assert.equal(entryOf(model({ labels: ["identity", "elu+1"] })), null);  // another setting: not answered
});

test("a link's own settings: a run built ahead of time, the defaults, or neither", () => {
  assert.equal(runOfLink("preset=worked+example"), worked);
  assert.equal(runOfLink(yours.query), yours);
  assert.equal(runOfLink("preset=random+tokens"), null);  // the default run, in the page
  assert.equal(runOfLink(""), null);
  assert.equal(runOfLink("preset=worked+example&d=6"), undefined);  // waits for Python
});

test("the runs' files are fetched as the pointer comes to the settings, once", async () => {
  const { doc } = page();
  watchAhead(doc);
  const at = (cls) => ({ composedPath: () => [{ classList: { contains: (c) => c === cls } }] });
  for (const fn of [...listeners.pointerover]) fn(at("elsewhere"));
  assert.deepEqual(asked, []);
  for (const fn of [...listeners.pointerover]) fn(at(config.contract.roles.controls));
  assert.deepEqual(asked, [worked.file, yours.file]);
  assert.equal([...listeners.pointerover].length + [...listeners.focusin].length, 0);
});

test("choices go in as patches: the way back from the run on screen, then the way to the next", async () => {
  readLink("?theme=dark");
  const { doc, preset } = page();
  watchAhead(doc);
  preset.active = 1;  // the reader's click
  doc.heard({ kind: "ModelChanged", model: preset, attr: "active" });
  await choose(undefined).catch(() => {});  // (waits for the queue)
  assert.deepEqual(doc.patches, ["to worked"]);
  assert.deepEqual([state.prebuilt.file, state.prebuilt.csv, player.t], [worked.file, "worked", 0]);
  assert.equal(location.search, "?preset=worked+example&t=0&theme=dark");
  assert.deepEqual(Object.keys(timings.choice), ["load", "patch", "show"]);
  await choose(yours, doc);
  assert.deepEqual(doc.patches, ["to worked", "worked back", "to yours"]);
  await choose(yours, doc);  // the run on screen already: nothing
  await choose(null, doc);  // the default run
  assert.deepEqual(doc.patches.slice(3), ["yours back"]);
  assert.equal(state.prebuilt, null);
  assert.equal(location.search, "?t=0&theme=dark");
  assert.deepEqual(asked, [worked.file, yours.file]);  // each file fetched once (ahead of the choice)
});

test("a change once Python is live, or the patches' own changes, are no choice here", () => {
  const { doc, preset } = page();
  watchAhead(doc);
  preset.active = 2;
  player.applying = true;
  doc.heard({ kind: "ModelChanged", model: preset, attr: "active" });
  player.applying = false;
  doc.heard({ kind: "ModelChanged", model: preset, attr: "visible" });
  return choose(undefined).catch(() => {}).then(() => assert.deepEqual(doc.patches, []));
});

test("a run that cannot be loaded keeps the choice: the link says it, Python is asked, and the page says so", async () => {
  readLink("");
  const { doc, preset } = page();
  elements["btn-csv"] = { disabled: false };
  const broken = { ...worked, file: "runs/running-sum-9.json" };
  preset.active = 1;
  await choose(broken, doc);
  assert.deepEqual([doc.patches, state.prebuilt, preset.active], [[], null, 1]);
  assert.deepEqual([state.ownSettings, elements["btn-csv"].disabled], [true, true]);  // (Python renders it: python.js pageInfo)
  assert.equal(location.search, "?preset=worked+example");
  assert.match(elements["lab-notice-text"].textContent, /could not be loaded ahead of time \(answered 404\): the simulator works it out once it has started/);
  preset.active = 0;
  await choose(null, doc);  // back to the run on screen: settled
  assert.deepEqual([state.ownSettings, elements["btn-csv"].disabled, elements["lab-notice-text"].textContent], [false, false, ""]);
});

test("a link's own settings with one choice more or less", () => {
  assert.equal(withChoice("", "preset", worked), "preset=worked+example");
  assert.equal(withChoice("preset=worked+example", "preset", null), "");
  assert.equal(withChoice("model_a=x2", "model_b", { link: "model_b=y2" }), "model_a=x2&model_b=y2");
});

test("two settings changed together have no run: the link says them, Python is asked; back to a run, the page settles", async () => {
  // a page of two menus, each choice of each built ahead of time with the other at its default
  const two = { ...config, link: { ...config.link, defaults: "model_a=x&model_b=y" },
    prebuilt: [{ link: "model_a=x2", query: "model_a=x2&model_b=y", file: "runs/two-1.json", t_max: 2 },
      { link: "model_b=y2", query: "model_a=x&model_b=y2", file: "runs/two-2.json", t_max: 2 }],
    choices: [{ setting: "model_a", key: "model_a", labels: { x: -1, x2: 0 } },
      { setting: "model_b", key: "model_b", labels: { y: -1, y2: 1 } }] };
  files["runs/two-1.json"] = { csv: "a2", patch: { name: "to a2" }, back: { name: "a2 back" } };
  files["runs/two-2.json"] = { csv: "b2", patch: { name: "to b2" }, back: { name: "b2 back" } };
  useConfig(two);
  try {
    readLink("");
    // (Panel's select of named objects: [value, label] pairs; the config names the labels)
    const a = model({ options: [["vx", "x"], ["vx2", "x2"]], value: "vx", title: "Model A", css_classes: [AHEAD] });
    const b = model({ options: [["vy", "y"], ["vy2", "y2"]], value: "vy", title: "Model B", css_classes: [AHEAD] });
    const frames = Object.assign(source({ t: [0, 1, 2] }), { name: config.contract.frames.source, tags: [{ bindings: [] }] });
    const doc = fakeDoc([frames, a, b]);
    doc.patches = [];
    doc.apply_json_patch = (patch) => doc.patches.push(patch.name);
    doc.on_change = (fn) => { doc.heard = fn; };
    player.attach(doc);
    asked.length = 0;
    watchAhead(doc);
    for (const fn of [...(listeners.pointerover || [])]) fn({ composedPath: () => [{ classList: { contains: (c) => c === config.contract.roles.controls } }] });
    assert.deepEqual(asked, []);  // a menu's runs: fetched at the choice, not as the pointer comes
    const pick = async (m, label) => {
      m.value = `v${label}`;
      doc.heard({ kind: "ModelChanged", model: m, attr: "value" });
      await choose(undefined).catch(() => {});
    };
    elements["btn-csv"] = { disabled: false };
    await pick(a, "x2");
    assert.deepEqual([doc.patches, state.prebuilt.file, state.ownSettings], [["to a2"], "runs/two-1.json", false]);
    await pick(b, "y2");  // no run has both: nothing patched, Python asked for the pair
    assert.deepEqual(doc.patches, ["to a2"]);
    assert.equal(state.prebuilt.file, "runs/two-1.json");  // what is on screen
    assert.equal(state.ownSettings, true);  // (Python renders the link's page: python.js pageInfo)
    assert.equal(location.search, "?model_a=x2&model_b=y2");
    assert.equal(elements["btn-csv"].disabled, true);
    assert.match(elements["lab-notice-text"].textContent, /Model A and Model B changed together are worked out by the simulator/);
    await pick(b, "y");  // back to the run on screen: it steps on, as it is
    assert.deepEqual(doc.patches, ["to a2"]);
    assert.deepEqual([state.ownSettings, elements["btn-csv"].disabled, location.search], [false, false, "?model_a=x2&t=0"]);
    assert.equal(elements["lab-notice-text"].textContent, "");
    await pick(a, "x");
    await pick(b, "y2");  // one at a time again: each its run
    assert.deepEqual(doc.patches, ["to a2", "a2 back", "to b2"]);
    assert.equal(location.search, "?model_b=y2&t=0");
  } finally {
    useConfig(config);
  }
});
