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

function renderMath() {
  if (!window.renderMathInElement) return;
  document.querySelectorAll(".lab-text, .lab-intro").forEach((el) =>
    window.renderMathInElement(el, { delimiters: DELIMITERS, throwOnError: false }));
}

export function typeset() {
  const style = Object.assign(document.createElement("link"), { rel: "stylesheet", href: "static/katex/katex.min.css" });
  const scripts = ["static/katex/katex.min.js", "static/katex/contrib/auto-render.min.js"].map((src) =>
    load(Object.assign(document.createElement("script"), { src, async: false }), src));  // run in this order
  return Promise.all([load(style, "static/katex/katex.min.css"), ...scripts]).then(renderMath)
    .catch((err) => console.warn("formulas:", err));
}
