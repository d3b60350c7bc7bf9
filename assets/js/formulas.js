// Formulas, typeset once the plots are on screen, before Python: KaTeX (style sheet, script,
// fonts) is fetched and run after the first plot: the formulas are in the lesson text below
// the simulator, and typesetting them delayed it.
export const DELIMITERS = [
  { left: "\\[", right: "\\]", display: true },
  { left: "\\(", right: "\\)", display: false },
  { left: "$$", right: "$$", display: true },
];

// Resolves once the element's file has loaded.
function load(el, url) {
  const loaded = new Promise((resolve, reject) => {
    el.onload = resolve;
    el.onerror = () => reject(new Error(`${url} did not load`));
  });
  document.head.append(el);
  return loaded;
}

// Block by block (each paragraph, heading, list of the texts, and each formula standing in a
// text's own flow, between them), yielding to the page after every slice of about 30 ms:
// typesetting a whole lesson at once was one task of 110-180 ms (bench/jank.py), and a step
// pressed meanwhile waited for it. Returns once all are typeset.
const MATH = /\\[([]|\$\$/;
export async function renderMath(containers, render = globalThis.renderMathInElement, sliceMs = 30) {
  if (!render) return;
  const options = { delimiters: DELIMITERS, throwOnError: false };
  let start = performance.now();
  for (const el of containers) {
    for (const node of [...el.childNodes]) {
      if (node.nodeType !== 1 && !(node.nodeType === 3 && MATH.test(node.textContent))) continue;
      if (performance.now() - start > sliceMs) {
        await new Promise((r) => setTimeout(r, 0));
        start = performance.now();
      }
      if (node.nodeType === 1) {
        render(node, options);
      } else {  // a text node: typeset in a fragment of its own, put back where it stood
        const next = node.nextSibling;
        const fragment = node.ownerDocument.createDocumentFragment();
        fragment.append(node);
        render(fragment, options);
        el.insertBefore(fragment, next);
      }
    }
  }
}

export function typeset() {
  const style = Object.assign(document.createElement("link"), { rel: "stylesheet", href: "static/katex/katex.min.css" });
  const scripts = ["static/katex/katex.min.js", "static/katex/contrib/auto-render.min.js"].map((src) =>
    load(Object.assign(document.createElement("script"), { src, async: false }), src));  // run in this order
  return Promise.all([load(style, "static/katex/katex.min.css"), ...scripts])
    .then(() => renderMath([...document.querySelectorAll(".lab-text, .lab-intro")], window.renderMathInElement))
    .catch((err) => console.warn("formulas:", err));
}
