// Display formulas no wider than the text around them: one wider than its column (the lesson
// text beside the figures, l in the presenter view: 340 px at 1280 x 720; a phone) takes a
// smaller type, down to LEAST of its own, instead of a scroll bar under it (running-sum's
// o_t = ... = S_t^T phi(q_t) / ... had scrolled in the presenter's column); narrower still, it
// scrolls (lab.css). Typeset at build time (KaTeX): measured once the fonts are in, and again
// when the column's width changes.
const LEAST = 0.6;

let fitted = false;  // once with the text shown
function fitFormulas() {
  // The text held out of sight (lab.css): measuring would lay it out. Fitted once shown.
  const first = document.querySelector(".lab-text > *");
  if (first && first.checkVisibility && !first.checkVisibility()) return;
  fitted = true;
  for (const box of document.querySelectorAll(".lab-text .katex-display")) {
    const tex = box.querySelector(".katex");
    if (!tex) continue;
    tex.style.fontSize = "";
    const room = box.clientWidth, need = box.scrollWidth;
    if (room > 0 && need > room + 1) {
      const own = parseFloat(getComputedStyle(tex).fontSize);
      tex.style.fontSize = `${(own * Math.max(LEAST, (0.98 * room) / need)).toFixed(2)}px`;
    }
  }
}
// Once the fonts are in (KaTeX's load when a formula is first shown), after the next layout.
// A text just shown asks for its fonts as it is first laid out, by the measuring itself.
function fitWithFonts() {
  fitFormulas();
  if (document.fonts && document.fonts.status === "loading") document.fonts.ready.then(fitFormulas);
}
export function fitFormulasSoon() {
  requestAnimationFrame(() => (document.fonts ? document.fonts.ready : Promise.resolve()).then(fitWithFonts));
}
export function watchFormulas() {
  let timer = null;
  addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(fitFormulasSoon, 150); });
  fitFormulasSoon();
  // The text's size changes as it is shown (from the screen's height it keeps meanwhile).
  const text = document.querySelector(".lab-text");
  if (text && typeof ResizeObserver === "function") new ResizeObserver(() => { if (!fitted) fitFormulasSoon(); }).observe(text);
}
