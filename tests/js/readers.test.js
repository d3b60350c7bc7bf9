// assets/js/readers.js: what a screen reader hears after a step (t and the caption as text,
// hidden parts left out), and the names Panel's widgets lack.
import test from "node:test";
import assert from "node:assert/strict";
import { announcement, nameOf, plainText, ringRoot } from "../../assets/js/readers.js";
import { group } from "../../assets/js/player.js";
import { loadConfig, model } from "./fixture.js";

const { contract } = loadConfig();

// A template stand-in: markup to text, elements marked aria-hidden dropped (as the browser's
// parser would leave them out once removed).
globalThis.document = {
  createElement: () => {
    const tpl = { innerHTML: "" };
    tpl.content = {
      querySelectorAll: () => [],
      get textContent() { return tpl.innerHTML.replace(/<([a-z]+)[^>]*aria-hidden='true'[^>]*>.*?<\/\1>/g, "").replace(/<[^>]*>/g, ""); },
    };
    return tpl;
  },
};

test("a caption's markup is read as text, hidden parts and extra spaces left out", () => {
  assert.equal(plainText("<b>t = 2</b>:  k\u2082 <span aria-hidden='true'>▮▮</span> wrote\n v"), "t = 2: k\u2082 wrote v");
});

test("a step is announced as t of t_max and the caption at that t", () => {
  const caption = model({ css_classes: [contract.roles.caption] }), other = model({});
  const p = {
    t: 1, tMax: 4,
    groups: group([[other, contract.frames.text, "0:x"], [caption, contract.frames.text, "1:caption"]]),
    frames: { data: { "0:x": ["no", "no"], "1:caption": ["<i>zero</i>", "<i>one</i>: the state"] } },
  };
  assert.equal(announcement(p), "t = 1 of 4. one: the state");
  assert.equal(announcement({ ...p, groups: [] }), "t = 1 of 4.");
});

test("a widget without a title takes the label just before it, up to its colon", () => {
  const label = model({ text: "Write strength β: <b>0.5</b>" }), slider = model({ title: "" });
  const parent = model({ children: [label, slider] });
  const parents = new Map([[label, parent], [slider, parent]]);
  assert.equal(nameOf(slider, parents), "Write strength β");
  assert.equal(nameOf(model({ title: "Tokens T:" }), new Map()), "Tokens T");
});

test("a shadow root takes the focus ring's sheet once, the document none (lab.css rings it)", () => {
  globalThis.CSSStyleSheet = class { replaceSync(text) { this.text = text; } };
  try {
    const root = { nodeType: 11, adoptedStyleSheets: [] };
    assert.equal(ringRoot(root), true);
    assert.equal(ringRoot(root), false);
    assert.equal(root.adoptedStyleSheets.length, 1);
    assert.match(root.adoptedStyleSheets[0].text, /:focus-visible \{ outline: 3px solid var\(--accent/);
    assert.equal(ringRoot({ nodeType: 9, adoptedStyleSheets: [] }), false);
  } finally { delete globalThis.CSSStyleSheet; }
});
