// When the parts of the page set aside at first paint (first-paint.js: further main views and
// figures, the exercise, all below the first main view) may join. Building them takes the page's
// thread 0.6-1.7 s on a 2-core machine, and while Python's worker restores its snapshot the two
// threads share the cores: joined before Python, they made the page live later (medians of 4
// cold loads each way: running-sum 4.72 -> 4.17 s, gates 4.85 -> 4.39 s; hybrid, whose parts
// had joined before its heap arrived, 4.13 -> 4.15 s). So, on the whole page as a reader opens
// it, they join once the page is live, or at once when the reader goes looking for them
// (scrolls, by wheel, touch, keys or a link; prints), or Python could not start, or after
// FALLBACK_MS in any case. The presenter view, an embed and a named view (?view=) need every
// part for their fit and height: there they join at once, as before.
let release = null;
let gate = null;
let early = false;  // letJoin came first (Python failed before the first paint)
// A reader going down the page (by wheel, touch, keys or a link: each scrolls) or printing it.
const EVENTS = ["scroll", "wheel", "touchmove", "beforeprint"];

export const FALLBACK_MS = 8000;

// A promise that resolves when the parts may join (now, if wait is false).
export function whenToJoin({ wait = true, win = globalThis, fallbackMs = FALLBACK_MS } = {}) {
  if (gate) return gate;
  gate = new Promise((resolve) => { release = resolve; });
  if (!wait || early) { letJoin(); return gate; }
  const go = () => letJoin();
  for (const name of EVENTS) win.addEventListener(name, go, { once: true, passive: true, capture: true });
  const timer = setTimeout(go, fallbackMs);
  gate.then(() => {
    clearTimeout(timer);
    for (const name of EVENTS) win.removeEventListener(name, go, { capture: true });
  });
  return gate;
}

// The page is live, or failed, or a reader looks for what is below: the parts join now.
export function letJoin() {
  if (!gate) early = true;
  if (release) { release(); release = null; }
}

// The node tests: back to the start.
export function resetJoin() { gate = null; release = null; early = false; }
