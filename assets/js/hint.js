// "Show it on the plots" (ui/exercises.py): the worker's patch asks the player to show a t (its
// seek). The page then scrolls so that the transport and the plots under it are on screen (the
// button is at the foot of the page) and says, under the transport, what to press; the line
// goes with the first step that follows.
import { $ } from "./config.js";
import { player } from "./player.js";

const SAY = "The exercise is on the plots now, at t = 0: press Step (→) or Play to go through it.";
let watching = false;
let shownAt = null;  // the t the line speaks of

export function showOnPlots(t) {
  player.seek(t);
  const bar = document.querySelector(".lab-transport");
  // at once: a smooth scroll was cut short half-way by the new run's layout (chunkwise, hybrid)
  bar.scrollIntoView({ behavior: "instant", block: "start" });
  let el = $("lab-hint");
  if (!el) {
    el = document.createElement("p");
    el.id = "lab-hint";
    el.setAttribute("role", "status");
    bar.append(el);
  }
  el.textContent = SAY.replace("t = 0", `t = ${player.t}`);
  el.hidden = false;
  shownAt = player.t;
  if (!watching) {
    watching = true;
    player.onChange((now) => { if (now !== shownAt && $("lab-hint")) $("lab-hint").hidden = true; });
  }
}
