// assets/js/formulas.js: the lesson's formulas typeset block by block, yielding to the page
// between slices (one task for a whole lesson had been 130-150 ms), every block once.
import test from "node:test";
import assert from "node:assert/strict";
import { DELIMITERS, renderMath } from "../../assets/js/formulas.js";

// Fake nodes: just what renderMath touches (childNodes, nodeType, textContent, a fragment).
const text = (t) => ({ nodeType: 3, textContent: t, name: t });
const block = (name) => ({ nodeType: 1, name });
const container = (nodes) => {
  const el = { childNodes: nodes, inserted: [] };
  el.insertBefore = (fragment, next) => el.inserted.push([fragment.nodes.map((n) => n.name), next ? next.name : null]);
  for (const n of nodes) {
    n.ownerDocument = { createDocumentFragment: () => ({ nodes: [], append(x) { this.nodes.push(x); } }) };
    Object.defineProperty(n, "nextSibling", { get: () => nodes[nodes.indexOf(n) + 1] || null });
  }
  return el;
};
const nameOf = (el) => el.name || el.nodes.map((n) => n.name).join("");

test("every block of every text is typeset once, in order, with the page's delimiters", async () => {
  const seen = [];
  const texts = [container([text("\n"), block("h2"), text("\n"), block("p1")]), container([block("p2")])];
  await renderMath(texts, (el, options) => { seen.push(nameOf(el)); assert.deepEqual(options.delimiters, DELIMITERS); });
  assert.deepEqual(seen, ["h2", "p1", "p2"]);  // the blank text between them is left alone
});

test("a formula standing in a text's own flow is typeset on its own and put back where it stood", async () => {
  const seen = [];
  const display = text("\\[ S_t = S_{t-1} + k v^T \\]");
  const article = container([block("p1"), display, block("p2"), text("$$x$$")]);
  await renderMath([article], (el) => seen.push(nameOf(el)));
  assert.deepEqual(seen, ["p1", display.name, "p2", "$$x$$"]);
  assert.deepEqual(article.inserted, [[[display.name], "p2"], [["$$x$$"], null]]);
});

test("the typesetting yields to the page between slices, not after each block", async () => {
  const realTimeout = globalThis.setTimeout;
  let yields = 0;
  globalThis.setTimeout = (fn, ms) => { yields += 1; return realTimeout(fn, ms); };
  try {
    const blocks = container([block("a"), block("b"), block("c")]);
    await renderMath([blocks], () => {}, 1e9);  // a long slice: all in one go
    assert.equal(yields, 0);
    const slow = () => { const until = performance.now() + 2; while (performance.now() < until) { /* a block's work */ } };
    await renderMath([blocks], slow, 1);  // slices shorter than a block: a yield before each but the first
    assert.equal(yields, 2);
  } finally {
    globalThis.setTimeout = realTimeout;
  }
});

test("without KaTeX (its script did not load) nothing is done", async () => {
  assert.equal(await renderMath([container([block("p")])], undefined), undefined);
});
