// assets/js/link.js: the shell's keys checked by the link contract Python states
// (ui/urlstate.py), notices bounded and quoted as given, and a bad t named and dropped.
import test from "node:test";
import assert from "node:assert/strict";
import { acceptShell, accepts, choosePrebuilt, loadPrebuilt, loadRun, readLink, seekFromLink, shown, writeUrl } from "../../assets/js/link.js";
import { state } from "../../assets/js/state.js";
import { fakeDocument, loadConfig } from "./fixture.js";

const config = loadConfig();
const SHELL = config.link.shell;
const elements = fakeDocument();
globalThis.history = { replaceState: (_, __, url) => { globalThis.location.search = new URL(url, "http://x").search; } };
globalThis.location = { pathname: "/running-sum.html", search: "", hash: "", href: "http://x/running-sum.html" };
elements["tp-speed"] = { value: "8" };

test("every shell key's own example is accepted, and nonsense is not", () => {
  for (const [key, spec] of Object.entries(SHELL)) {
    if (spec.accepts === "view") continue;  // running-sum's views: below
    assert.notEqual(acceptShell(spec, String(spec.example), []), null, key);
    assert.equal(acceptShell(spec, "nonsense\u0000", []), null, key);
  }
  assert.equal(acceptShell(SHELL.present, " YES ".toLowerCase().trim() === "yes" ? "yes" : "1"), SHELL.present.on.includes("yes") ? "1" : "1");
  assert.equal(acceptShell(SHELL.t, "007"), "7");
  assert.equal(acceptShell(SHELL.t, "-1"), null);
  assert.equal(acceptShell(SHELL.t, "1e3"), null);
  const views = config.link.views;
  assert.ok(views.length > 0, "running-sum names its views");
  assert.equal(acceptShell(SHELL.view, views[0], views), views[0]);
  assert.equal(acceptShell(SHELL.view, views[0].toUpperCase(), views), null);  // a view's name, exactly
});

test("what a key expects is said in words, with the run's last t", () => {
  assert.equal(accepts(SHELL.t, 12), `a whole number from ${SHELL.t.min} to 12`);
  assert.match(accepts(SHELL.theme), /^one of light, dark/);
  assert.equal(accepts(SHELL.view, undefined, []), "nothing: this page has no named views");
});

test("a value is quoted as given: invisible characters as escapes, long ones cut", () => {
  assert.equal(shown("a\u200bb\u0000", 40), "a\\u200bb\\u0000");
  assert.equal(shown("x".repeat(100), 10), `${"x".repeat(9)}…`);
  assert.equal(shown("two words", 40), "two words");
});

test("the link is read once: bad and repeated keys named, own settings noticed", () => {
  readLink("?t=5&t=99x&theme=purple&speed=15");
  assert.deepEqual(state.shell, { speed: "15" });
  const text = elements["lab-notice-text"].textContent;
  assert.match(text, /The link gives t 2 times; the last one counts\./);
  assert.match(text, new RegExp(`Ignored t=99x: expected a whole number from 0 to ${config.prerender.t_max}\\.`));
  assert.match(text, /Ignored theme=purple/);
  assert.equal(elements["lab-notice"].hidden, false);
  assert.equal(state.ownSettings, false);
  const [key] = config.link.settings;
  readLink(`?${key}=${encodeURIComponent("surely-not-the-default")}`);
  assert.equal(state.ownSettings, true);
  readLink(`?${config.link.defaults}`);  // the defaults spelt out: the page built ahead of time
  assert.equal(state.ownSettings, false);
});

test("a t past the run's end is named and dropped from the link", () => {
  readLink("?t=40");
  assert.equal(state.shell.t, "40");
  seekFromLink(12);
  assert.equal(state.shell.t, undefined);
  assert.match(elements["lab-notice-text"].textContent, /Ignored t=40: expected a whole number from 0 to 12\./);
  assert.doesNotMatch(location.search, /t=40/);
});

test("a link the page offers shows its run built ahead of time; any other waits for Python", async () => {
  const run = { link: "preset=worked+example", query: "preset=worked+example&d=4&tokens=12&feature_map=identity&normalize=1&seed=0&ex=0",
    file: "runs/running-sum-1.json", t_max: 2 };
  const listed = config.prebuilt;
  config.prebuilt = [run];
  const quiet = console.warn;
  try {
    for (const link of ["?preset=worked+example&t=1", "?preset=worked%20example&theme=dark", `?${run.query}`,
      "?preset=random+tokens&preset=worked+example"]) {  // (a key given twice: its last value)
      readLink(link);
      assert.deepEqual([state.ownSettings, state.prebuilt && state.prebuilt.file], [false, run.file], link);
    }
    for (const link of ["?preset=worked+example&d=6", "?preset=your+turn"]) {  // not built ahead of time
      readLink(link);
      assert.deepEqual([state.ownSettings, state.prebuilt], [true, null], link);
    }
    readLink("?t=2");  // the defaults' run, in the page itself
    assert.deepEqual([state.ownSettings, state.prebuilt], [false, null]);
    // fetched once: the patches of the default document, its CSV kept
    readLink("?preset=worked+example");
    const asked = [], file = { csv: "t,x\n1,2\n", t_max: 2, patch: { events: [1] }, back: { events: [2] } };
    const get = async (url) => { asked.push(url); return { ok: true, json: async () => file }; };
    const data = await loadPrebuilt(get);
    assert.deepEqual([asked, data, state.prebuilt.csv, state.ownSettings], [[run.file], file, "t,x\n1,2\n", false]);
    assert.equal(await loadRun(run, get), file);
    assert.equal(asked.length, 1);
    // missing: the link's settings wait for Python, as any other link's
    const missing = { ...run, file: "runs/running-sum-9.json" };
    config.prebuilt = [missing];
    readLink("?preset=worked+example");
    const warned = [];
    console.warn = (text) => warned.push(text);
    assert.equal(await loadPrebuilt(async () => ({ ok: false, status: 404 })), null);
    assert.deepEqual([state.ownSettings, state.prebuilt], [true, null]);
    assert.match(warned[0], /runs\/running-sum-9\.json\) could not be loaded \(answered 404\)/);
    assert.equal(await loadPrebuilt(), null);  // nothing asked for: nothing fetched
  } finally {
    console.warn = quiet;
    config.prebuilt = listed;
    readLink("");
  }
});

test("a run chosen in place becomes the link's settings, and the default run none", () => {
  const [worked, yours] = config.prebuilt;
  readLink("?preset=worked+example&t=1&theme=dark");
  choosePrebuilt(yours, "t,x\n0,1\n");
  assert.deepEqual([state.prebuilt.file, state.prebuilt.csv, state.shell.t, state.shell.theme], [yours.file, "t,x\n0,1\n", undefined, "dark"]);
  writeUrl();
  assert.match(location.search, /^\?preset=your\+turn&t=0&theme=dark$/);
  choosePrebuilt(null);
  writeUrl();
  assert.equal(state.prebuilt, null);
  assert.equal(location.search, "?t=0&theme=dark");
  assert.ok(worked);
  readLink("");
});

test("a link that asks only for its own exercise steps the default run; its exercise waits", async () => {
  const { hideOwnExercise } = await import("../../assets/js/link.js");
  assert.deepEqual(config.link.same_run, ["ex"]);  // running-sum's exercise number changes no run
  readLink("?ex=3&t=2");
  assert.deepEqual([state.ownSettings, state.sameRun, state.prebuilt, state.shell.t], [false, true, null, "2"]);
  const box = { css_classes: [config.contract.roles.exercise], visible: true }, other = { css_classes: [], visible: true };
  const preset = { css_classes: [config.contract.roles.ahead], disabled: false };  // (its runs: the default exercise's)
  hideOwnExercise({ all_models: new Set([box, other, preset]) });
  assert.deepEqual([box.visible, other.visible, preset.disabled], [false, true, true]);
  readLink("?ex=3&d=6");  // with a setting that changes the run: waits for Python
  assert.deepEqual([state.ownSettings, state.sameRun], [true, false]);
  readLink("?ex=0");  // the default exercise: the page as built
  assert.deepEqual([state.ownSettings, state.sameRun], [false, false]);
  readLink("");
});
