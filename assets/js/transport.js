// The transport bar: Back, Step, Play, Reset, the timeline and the speed, bound to the player;
// disabled until there is something to step.
import { $ } from "./config.js";
import { urlLater, writeUrl } from "./link.js";
import { player } from "./player.js";
import { state } from "./state.js";

const controls = () => ({ back: $("tp-back"), step: $("tp-step"), play: $("tp-play"), reset: $("tp-reset"), t: $("tp-t"), speed: $("tp-speed") });

export function enableTransport(on) {
  for (const el of Object.values(controls())) el.disabled = !on;
}
export const canStep = () => !$("tp-step").disabled;

// The link's speed (steps per second, 0.5 to 60), as an option of the list if it is not one.
export function speedFromLink(select, speed) {
  if (speed === undefined) return;
  const n = Number(speed);
  if (![...select.options].some((o) => Number(o.value) === n)) select.add(new Option(`${n} / s`, String(n)));
  select.value = [...select.options].find((o) => Number(o.value) === n).value;
}

export function watchTransport() {
  const tp = controls();
  enableTransport(false);
  tp.back.onclick = () => player.back();
  tp.step.onclick = () => player.step();
  tp.play.onclick = () => player.toggle();
  tp.reset.onclick = () => player.reset();
  tp.t.addEventListener("input", () => player.seek(Number(tp.t.value)));
  tp.speed.onchange = () => { player.speed = Number(tp.speed.value); writeUrl(); };
  speedFromLink(tp.speed, state.shell.speed);
  player.speed = Number(tp.speed.value);
  player.onChange((t, tMax) => {
    if (Number(tp.t.max) !== tMax) tp.t.max = String(tMax);
    if (Number(tp.t.value) !== t) tp.t.value = String(t);
    $("tp-t-out").value = `${t} / ${tMax}`;
    tp.t.setAttribute("aria-valuetext", `t = ${t} of ${tMax}`);
    const label = player.playing ? "Pause" : "Play";
    if (tp.play.textContent !== label) {
      tp.play.textContent = label;
      tp.play.setAttribute("aria-pressed", String(player.playing));
    }
    urlLater();
  });
}
