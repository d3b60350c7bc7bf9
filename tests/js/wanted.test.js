// assets/js/wanted.js and config.js's embedAsked: a page opened whole starts Python at once (the
// shell runs once the first plot's scripts are in); an embed only once it is wanted (inside the settings, a link to its own settings, the Settings
// button, a link with settings of its own) and in view, never for stepping, and only once.
import test from "node:test";
import assert from "node:assert/strict";
import { embedAsked, savesData } from "../../assets/js/config.js";
import { readLink } from "../../assets/js/link.js";
import { COLD, COLD_FIGURES } from "../../assets/js/progress.js";
import { state } from "../../assets/js/state.js";
import { shouldStart, startWhenWanted, wantsSettings } from "../../assets/js/wanted.js";
import { fakeDocument, loadConfig } from "./fixture.js";

const config = loadConfig();
const elements = fakeDocument();
const roles = config.contract.roles;

// An element with classes (or an id), and an event of a type whose path runs through it to the root.
const el = (classes = [], id = "") => ({ nodeType: 1, id, classList: { contains: (c) => classes.includes(c) } });
const event = (type, ...path) => ({ type, composedPath: () => [...path, el(["lab-main"]), { nodeType: 9 }] });

test("a pointer, focus or key inside the settings or on a link to the page's own settings is a sign; stepping is not", () => {
  const handle = el(["noUi-handle"]), controls = el([roles.controls]), link = el([roles.settings_link]);
  for (const type of ["pointerdown", "focusin", "keydown"]) {
    assert.equal(wantsSettings(event(type, handle, controls)), true, type);
    assert.equal(wantsSettings(event(type, link)), true, type);
  }
  assert.equal(wantsSettings(event("click", handle, controls)), false);  // its pointerdown came first
  // the Settings button: clicked (a pointer, or Enter / Space), not merely focused on the way past
  const settings = el([], "tp-settings");
  assert.equal(wantsSettings(event("click", settings)), true);
  assert.equal(wantsSettings(event("focusin", settings)), false);
  assert.equal(wantsSettings(event("pointerdown", settings)), false);
  // stepping, the timeline, a figure: the page built ahead of time does them alone
  for (const id of ["tp-step", "tp-back", "tp-play", "tp-t"]) {
    for (const type of ["pointerdown", "focusin", "keydown", "click"]) assert.equal(wantsSettings(event(type, el([], id))), false, `${id} ${type}`);
  }
  assert.equal(wantsSettings(event("keydown", el(["bk-Figure"]))), false);
  assert.equal(wantsSettings({ type: "keydown", target: null }), false);  // no path at all
});

test("a page opened whole starts at once; an embed once it is in view and wanted or asked for by its link", () => {
  // a page opened whole: at once, wanted or not
  assert.equal(shouldStart({ embed: false, inView: true, wanted: false, ownSettings: false }), true);
  assert.equal(shouldStart({ embed: false, inView: true, wanted: true, ownSettings: false }), true);
  assert.equal(shouldStart({ embed: false, inView: true, wanted: false, ownSettings: true }), true);
  assert.equal(shouldStart({ embed: true, inView: true, wanted: false, ownSettings: false }), false);
  assert.equal(shouldStart({ embed: true, inView: false, wanted: true, ownSettings: false }), false);
  assert.equal(shouldStart({ embed: true, inView: false, wanted: false, ownSettings: true }), false);  // out of view: never
  assert.equal(shouldStart({ embed: true, inView: true, wanted: true, ownSettings: false }), true);
  assert.equal(shouldStart({ embed: true, inView: true, wanted: false, ownSettings: true }), true);
});

test("the link asks for an embed as boot-early.js reads it: a flag's on value, the last one counting", () => {
  const shell = config.link.shell;
  assert.equal(embedAsked("?embed=1", shell), true);
  assert.equal(embedAsked("?d=4&embed=Yes%20", shell), true);
  assert.equal(embedAsked("?embed=1&embed=0", shell), false);
  assert.equal(embedAsked("?embed=banana", shell), false);
  assert.equal(embedAsked("?embedded=1", shell), false);
  assert.equal(embedAsked("", shell), false);
});

// A document whose capturing listeners are kept, and an IntersectionObserver driven by hand.
function harness() {
  const listeners = new Map();
  const doc = {
    documentElement: {},
    addEventListener: (type, fn, capture) => { assert.equal(capture, true); listeners.set(type, fn); },
    removeEventListener: (type) => listeners.delete(type),
  };
  const observers = [];
  class Observer {
    constructor(callback) { this.callback = callback; this.observed = []; this.live = true; observers.push(this); }
    observe(target) { this.observed.push(target); }
    disconnect() { this.live = false; }
    show(isIntersecting) { this.callback([{ isIntersecting }]); }
  }
  let starts = 0;
  const fire = (e) => listeners.get(e.type) && listeners.get(e.type)(e);
  return { doc, Observer, observers, listeners, fire, start: () => { starts += 1; }, starts: () => starts };
}
const touchSlider = (type = "pointerdown") => event(type, el(["noUi-handle"]), el([roles.controls]));

test("an embed waits, says so, and starts once when it is in view and its settings are touched", () => {
  readLink("?embed=1");
  const h = harness();
  startWhenWanted(h.start, { embed: true, doc: h.doc, Observer: h.Observer });
  assert.equal(state.python, "waiting");
  assert.equal(elements["lab-stage"].textContent, COLD);
  assert.equal(elements["lab-status"].dataset.stage, "cold");
  assert.equal(h.observers.length, 1);
  assert.equal(h.observers[0].observed[0], h.doc.documentElement);  // the embed's own root
  h.observers[0].show(true);
  h.fire(event("pointerdown", el([], "tp-step")));
  h.fire(event("keydown", el([], "tp-t")));
  assert.equal(h.starts(), 0);  // in view and stepped: still waiting
  h.fire(touchSlider("focusin"));
  assert.equal(h.starts(), 1);
  assert.equal(state.python, "started");
  h.fire(touchSlider());
  h.observers[0].show(true);
  assert.equal(h.starts(), 1);  // once
  assert.equal(h.listeners.size, 0);  // nothing left watching
  assert.equal(h.observers[0].live, false);
});

test("an embed out of view never starts; wanted meanwhile, it starts as it comes into view", () => {
  readLink("?embed=1");
  const h = harness();
  startWhenWanted(h.start, { embed: true, doc: h.doc, Observer: h.Observer });
  h.observers[0].show(false);
  h.fire(touchSlider("keydown"));
  assert.equal(h.starts(), 0);
  assert.equal(state.python, "waiting");
  h.observers[0].show(false);
  assert.equal(h.starts(), 0);
  h.observers[0].show(true);
  assert.equal(h.starts(), 1);
});

test("an embed whose link has settings of its own starts as soon as it is in view, without the cold words", () => {
  readLink(`?embed=1&${config.link.settings[0]}=surely-not-the-default`);
  elements["lab-stage"].textContent = "Loading the page";
  const h = harness();
  startWhenWanted(h.start, { embed: true, doc: h.doc, Observer: h.Observer });
  assert.equal(elements["lab-stage"].textContent, "Loading the page");  // it is not waiting for the user
  h.observers[0].show(false);
  assert.equal(h.starts(), 0);
  h.observers[0].show(true);
  assert.equal(h.starts(), 1);
});

test("a page opened whole starts Python at once, and only once, its own settings or not", () => {
  readLink("");
  let h = harness();
  startWhenWanted(h.start, { embed: false, frugal: false, doc: h.doc, Observer: h.Observer });
  assert.deepEqual([h.starts(), state.python, h.listeners.size, h.observers.length], [1, "started", 0, 0]);
  h.fire(touchSlider("focusin"));
  assert.equal(h.starts(), 1);  // once
  readLink(`?${config.link.settings[0]}=surely-not-the-default`);
  h = harness();
  startWhenWanted(h.start, { embed: false, frugal: false, doc: h.doc, Observer: h.Observer });
  assert.deepEqual([h.starts(), h.listeners.size, h.observers.length], [1, 0, 0]);
});

test("without IntersectionObserver (an old browser) an embed counts as in view", () => {
  readLink("?embed=1");
  const h = harness();
  startWhenWanted(h.start, { embed: true, doc: h.doc, Observer: null });
  assert.equal(h.starts(), 0);
  h.fire(event("click", el([], "tp-settings")));
  assert.equal(h.starts(), 1);
});

test("a data saver or a slow link (3g and below) is told by navigator.connection where it exists", () => {
  assert.equal(savesData(undefined), false);  // Firefox, Safari: no connection object
  assert.equal(savesData({ saveData: false, effectiveType: "4g" }), false);
  assert.equal(savesData({ saveData: true, effectiveType: "4g" }), true);
  for (const slow of ["slow-2g", "2g", "3g"]) assert.equal(savesData({ saveData: false, effectiveType: slow }), true, slow);
  assert.equal(savesData({}), false);
  assert.equal(shouldStart({ embed: false, frugal: true, inView: true, wanted: false, ownSettings: false }), false);
  assert.equal(shouldStart({ embed: false, frugal: true, inView: true, wanted: true, ownSettings: false }), true);
  assert.equal(shouldStart({ embed: false, frugal: true, inView: true, wanted: false, ownSettings: true }), true);
});

test("a page opened whole that saves data waits like an embed, says why and how much, and starts once wanted", () => {
  readLink("");
  const h = harness();
  startWhenWanted(h.start, { embed: false, frugal: true, doc: h.doc, Observer: null });
  assert.equal(h.starts(), 0);
  assert.equal(state.python, "waiting");
  assert.equal(elements["lab-stage"].textContent, COLD);
  const said = elements["lab-figures"].textContent;
  assert.notEqual(said, COLD_FIGURES);
  assert.match(said, /data saver or a slow link Python \(\d+\.\d MB\) loads only then/);
  h.fire(event("pointerdown", el([], "tp-step")));
  assert.equal(h.starts(), 0);  // stepping is no sign
  h.fire(touchSlider());
  assert.equal(h.starts(), 1);
});
