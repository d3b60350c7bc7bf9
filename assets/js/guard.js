// What reaches Python from the browser's document. Changes the player makes are the browser's
// own: Python's copy of a bound model is never read, so they are not sent back through Panel's
// link (it would put Python on the path of every step).
// Panel's link sends a value change at once but holds the next ones for up to 500 ms, while a
// click goes at once: typing in a box and pressing its button reached Python as the click
// first, with the old text. A click that follows a change by less than that waits until the
// change has gone.
import { wrapOnChange } from "./bokeh-internals.js";

export const PANEL_HOLD_MS = 600;  // panel.io.pyodide's TIMEOUT (500 ms) and DEBOUNCE (50 ms), and a margin

// player: {applying, bound} (player.js). Called by Python (ui/app.py) before it links the
// document to itself.
export function guard(player, jsdoc, schedule = (fn, ms) => setTimeout(fn, ms)) {
  let lastChange = -Infinity;
  wrapOnChange(jsdoc, (callback) => (event) => {
    if (player.applying || (event && player.bound.has(event.model))) return;
    if (!event || event.kind === "ModelChanged") {
      lastChange = performance.now();
      return callback(event);
    }
    const wait = lastChange + PANEL_HOLD_MS - performance.now();
    if (wait > 0) schedule(() => callback(event), wait);
    else callback(event);
  });
}
