// assets/js/morph.js on a stand-in DOM (fixture.js): a readout's new markup changes only the
// nodes that differ (a step's caption: a number or two), keeps the others (the same objects),
// and ends as the markup says whatever the old content was.
import test from "node:test";
import assert from "node:assert/strict";
import { morph } from "../../assets/js/morph.js";
import { nodeDocument } from "./fixture.js";

function shown(html) {
  const doc = nodeDocument();
  const el = doc.createElement("div");
  morph(el, html);
  doc.changes.length = 0;
  return { doc, el };
}

test("a caption's new number changes that text node alone and keeps every element", () => {
  const { doc, el } = shown('<p class="cap"><b>t = 1</b> of 16<br>key k<sub>1</sub> = 0.50</p>');
  const [p] = el.childNodes, [b] = p.childNodes;
  morph(el, '<p class="cap"><b>t = 2</b> of 16<br>key k<sub>2</sub> = 0.25</p>');
  assert.equal(el.innerHTML, '<p class="cap"><b>t = 2</b> of 16<br>key k<sub>2</sub> = 0.25</p>');
  assert.deepEqual(doc.changes, [["text", "t = 2"], ["text", "2"], ["text", " = 0.25"]]);
  assert.equal(el.childNodes[0], p);
  assert.equal(p.childNodes[0], b);
});

test("the same markup again changes nothing", () => {
  const html = '<div class="rs-token"><h4>Token 3</h4><p>v = <b>1.0</b></p></div>';
  const { doc, el } = shown(html);
  morph(el, html);
  assert.deepEqual(doc.changes, []);
  assert.equal(el.innerHTML, html);
});

test("another element in a place is replaced; extra nodes are added or removed; attributes follow", () => {
  const { doc, el } = shown('<p class="a" title="x">one</p><i>two</i><span>three</span>');
  morph(el, '<p class="b">one</p><b>two</b>');
  assert.equal(el.innerHTML, '<p class="b">one</p><b>two</b>');
  assert.deepEqual(doc.changes, [["unattr", "title"], ["attr", "class", "b"], ["replace", "I", "B"], ["remove", "SPAN"]]);
  doc.changes.length = 0;
  morph(el, '<p class="b">one</p><b>two</b>text<br>');
  assert.equal(el.innerHTML, '<p class="b">one</p><b>two</b>text<br>');
  assert.deepEqual(doc.changes, [["add", "#text"], ["add", "BR"]]);
});

test("text becomes an element and back; empty markup empties the element", () => {
  const { el } = shown("plain");
  morph(el, "<b>plain</b>");
  assert.equal(el.innerHTML, "<b>plain</b>");
  morph(el, "plain again");
  assert.equal(el.innerHTML, "plain again");
  morph(el, "");
  assert.equal(el.innerHTML, "");
});
