// assets/js/embeds.js and print.js: the host page's snippet resizes the frame that spoke and no
// other; the links out of an embed and into a print drop the view's own keys.
// A height waits for the style sheets still loading (a widget changes size when its own applies).
import test from "node:test";
import assert from "node:assert/strict";
import vm from "node:vm";
import { readFileSync } from "node:fs";
import { fullPageLink, hostSnippet, sheetsPending } from "../../assets/js/embeds.js";
import { printRef } from "../../assets/js/print.js";
import { player } from "../../assets/js/player.js";

test("the host snippet sizes the frame whose page sent its height, and ignores anything else", () => {
  const frames = [{ contentWindow: "a", style: {} }, { contentWindow: "b", style: {} }];
  let listener = null;
  const context = { addEventListener: (type, fn) => { if (type === "message") listener = fn; }, document: { querySelectorAll: () => frames }, Math };
  vm.runInNewContext(readFileSync(new URL("../../assets/lab-embed-host.js", import.meta.url), "utf8"), context);
  listener({ data: { type: "lab-height", height: 612.4 }, source: "b" });
  listener({ data: { type: "lab-height", height: -5 }, source: "a" });
  listener({ data: { type: "other", height: 900 }, source: "a" });
  listener({ data: null, source: "a" });
  assert.deepEqual(frames.map((f) => f.style.height), [undefined, "613px"]);
});

test("the host snippet loads the host file beside the page (no inline script: a strict host CSP runs a file)", () => {
  assert.equal(hostSnippet("https://lab.example/course/lab/gates.html?d=4&t=3"),
    '<script src="https://lab.example/course/lab/assets/lab-embed-host.js" defer></script>');
  const code = readFileSync(new URL("../../assets/lab-embed-host.js", import.meta.url), "utf8");
  assert.doesNotMatch(code, /https?:\/\//);  // nothing fetched from anywhere
});

test("the link out of an embed keeps t and the settings, not embed or view", () => {
  assert.equal(fullPageLink("https://lab.example/gates.html?d=4&embed=1&view=state&t=3"), "https://lab.example/gates.html?d=4&t=3");
});

test("a print says t and the link that reopens this view (no embed, presenter or view keys)", () => {
  player.t = 3; player.tMax = 12;
  assert.equal(printRef("https://lab.example/gates.html?d=4&present=1&view=state&t=3"),
    "t = 3 of 12 · reopen this view: https://lab.example/gates.html?d=4&t=3");
});

test("a style sheet still loading anywhere, in the page or a shadow root, holds the height back", () => {
  // a fake tree: querySelectorAll answers the two selectors sheetsPending asks
  const root = (links, elements = []) => ({ querySelectorAll: (css) => (css.startsWith("link") ? links : elements) });
  const loaded = { sheet: {} }, loading = { sheet: null };
  assert.equal(sheetsPending(root([loaded])), false);
  assert.equal(sheetsPending(root([loaded, loading])), true);
  const widget = { shadowRoot: root([loading]) };  // a Panel widget's own sheet, inside its shadow root
  assert.equal(sheetsPending(root([loaded], [{}, widget])), true);
  const deeper = { shadowRoot: root([], [{ shadowRoot: root([loaded]) }]) };
  assert.equal(sheetsPending(root([], [deeper])), false);
});
