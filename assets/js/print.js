// Print: no controls, light, the current numbers, and the link to reopen this view.
// Writes state.print.
import { $ } from "./config.js";
import { player } from "./player.js";
import { state } from "./state.js";
import { restyleAll } from "./theme.js";

export function printRef(href = location.href) {
  const link = new URL(href);
  for (const k of ["embed", "present", "view"]) link.searchParams.delete(k);
  return `t = ${player.t} of ${player.tMax} · reopen this view: ${link.href}`;
}
function setPrint(on) {
  if (state.print === on) return;
  state.print = on;
  if (on) $("lab-print-ref").textContent = printRef();
  restyleAll();
}

export function watchPrint() {
  // (a synthetic beforeprint, as the screenshot helper sends to repaint held figures, is not printing)
  addEventListener("beforeprint", (e) => { if (e.isTrusted) setPrint(true); });
  addEventListener("afterprint", (e) => { if (e.isTrusted) setPrint(false); });
  if (window.matchMedia) matchMedia("print").addEventListener("change", (e) => setPrint(e.matches));
  player.onChange(() => { if (state.print) $("lab-print-ref").textContent = printRef(); });
}
