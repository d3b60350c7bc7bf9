// What reaches Python from the browser's document. Changes the player makes are the browser's
// own: Python's copy of a bound model is never read, so they are not sent to the worker (it
// would put Python on the path of every step). Everything else goes, in the order it was made
// (python.js keeps that order while the worker is busy: a click after a change of a text box
// reaches Python after the change).
import { wrapOnChange } from "./bokeh-internals.js";

// player: {applying, bound} (player.js). Called before the document is linked to the worker.
export function guard(player, jsdoc) {
  wrapOnChange(jsdoc, (callback) => (event) => {
    if (player.applying || (event && player.bound.has(event.model))) return;
    return callback(event);
  });
}
