// The presenter fit's search, for one view of the page: the figures' scale is the largest with
// which the page neither scrolls nor overflows the room (from one measurement, the scale that
// fills the room below the transport; then a binary search, as a row may wrap); then their
// widths grow, up to MAX_WIDE, into what room the rows leave at the side, and their heights into
// the room below. Each try is one BokehJS layout of the document on screen, out of sight (the
// stage area is transparent while fitting: presenter.js, its fit and its rehearsal). A try restyles with the
// fit it tries (a trial: {view, scale, wide, tall, drop}), never with state's, so a view other
// than the one on screen can be fitted ahead of time. The room is the screen less the lesson
// text when it is open in the presenter view (at the side, or below on a phone).
import { allModels, viewOf } from "./bokeh-internals.js";
import { $, hasRole, onAPhone, presenting } from "./config.js";
import { figureRows, MAX_WIDE, overflows, partsExtent, settled, shownParts, widths } from "./fit-measure.js";
import { player } from "./player.js";
import { state } from "./state.js";
import { restyleAll, restyleCount } from "./theme.js";

export const GOOD_SCALE = 0.9;  // a heatmap of 12 tokens has room for its tick labels
export const MIN_SCALE = 0.75;  // below it, a heatmap of 12 tokens runs its tick labels together (running-sum at 0.73)

// The largest scale in [lo, 3.2] at which the page fits, searched from guesses; null if it
// does not fit at lo. tryFit(scale) resolves to {fits, reach: [bottom, right], parts: [bottom,
// right] of the shown parts alone (optional)}; room: {top (where the stage area starts), width,
// height} of the screen. lo itself is tried only when nothing above it fits (a larger scale that
// fits says it does). The first guess takes the reach as growing in proportion to the scale;
// once a scale that fits and one that does not are known, the next lies between them where the
// line through their reaches meets the room (the header, padding and type do not scale, so the
// reach is not proportional); the same end moved twice in a row (a row wrapped): the middle.
export async function searchScale(lo, tryFit, room) {
  let scale = Math.max(lo, 1.45), hi = 3.2, best = null, atLo = null, atHi = null, moved = "";
  const limits = [room.height - 6 - room.top, room.width - 18];
  for (let i = 0; i < 7 && hi - lo > 0.03; i++) {
    const { fits, reach, parts } = await tryFit(scale);
    const [bottom, right] = parts || reach, now = [Math.max(1, bottom - room.top), Math.max(1, right - 16)];
    if (fits) { lo = scale; best = scale; atLo = now; } else if (scale === lo) return null; else { hi = scale; atHi = now; }
    const twice = moved === (fits ? "lo" : "hi");
    moved = fits ? "lo" : "hi";
    let next = atLo && atHi ? (twice ? (lo + hi) / 2 : between(lo, atLo, hi, atHi, limits))
      : 0.985 * scale * Math.min(limits[0] / now[0], limits[1] / now[1]);
    next = Math.round(next * 100) / 100;
    // the guess at or below lo, none fitting yet: whether lo fits at all; a guess from scales
    // that all fit is no bound (a part as wide as the screen reaches its edge at any scale):
    // it must go up, else the middle
    if (!(next > lo && next < hi)) next = best === null && next <= lo ? lo : Math.round((lo + hi) * 50) / 100;
    else if (!atHi && next < lo + 0.02) next = Math.round((lo + hi) * 50) / 100;
    if (atHi && best !== null && Math.abs(next - best) < 0.02) break;
    scale = next;
  }
  if (best === null && !(await tryFit(lo)).fits) return null;
  return best === null ? lo : best;
}
// Between a scale that fits (lo, its reach [high, wide]) and one that does not (hi): where the
// line through their reaches meets the limit, in each direction the larger one outgrew.
function between(lo, atLo, hi, atHi, limits) {
  let s = hi;
  for (let k = 0; k < 2; k++) {
    if (atHi[k] > limits[k] && atHi[k] > atLo[k]) s = Math.min(s, lo + (hi - lo) * (limits[k] - atLo[k]) / (atHi[k] - atLo[k]));
  }
  return s === hi ? (lo + hi) / 2 : s;
}

// The lesson text shown beside the figures (l in the presenter view: lab.css).
export const lessonOpen = () => presenting() && document.documentElement.classList.contains("show-text");
// A phone (config.js onAPhone): no scene fits its one screen at a readable size, so its
// presenter view scrolls down instead, the figures one below the other as wide as the screen
// (fitted to its width alone: they had shrunk to 0.45 to fit its height, three side by side at
// a third of its width each, their titles cut), and no figure taller than this share of its
// screen (a heatmap as wide as the screen had been two screens tall, its numbers in 200 px cells)
export const PHONE_FIGURE = 0.6;
const tallest = () => Math.max(0, ...shownParts(player.doc).filter((p) => p.figure).map((p) => p.r.height));
// The room the figures have: the screen, less the lesson text's column at its right (or its
// sheet at its foot, on a phone), below where the stage area starts; on a phone, its width and
// no bottom.
export function screenRoom() {
  let width = innerWidth, height = onAPhone() ? Infinity : innerHeight;
  const text = lessonOpen() ? document.querySelector(".lab-text") : null, r = text && text.getBoundingClientRect();
  if (r && r.width > 0 && r.height > 0) {
    if (r.left >= innerWidth / 3) width = Math.floor(r.left);
    else if (r.top >= innerHeight / 3 && height !== Infinity) height = Math.floor(r.top);
  }
  return { top: $("lab-stage-area").getBoundingClientRect().top + scrollY, width, height };
}

// A try was given up (a key, a click, another document on screen): the trial's search stops.
export class FitStopped extends Error {}

// Try one scale and width factors for a trial; resolves to whether its shown parts fit.
// A try of what the document already has (the same view, scale, widths, height and readouts as
// the trial's last try, nothing restyled since) is answered from that try, not laid out again.
async function tryFit(trial, scale, wide, tall = 1) {
  const key = JSON.stringify([trial.view, scale, [...wide].filter(([, w]) => w !== 1).sort(), tall, trial.drop]);
  Object.assign(trial, { scale, wide, tall });
  if (trial.last && trial.last.key === key && trial.last.restyles === restyleCount() && !trial.stopped()) return trial.last.result;
  state.fitTries += 1;
  trial.apply(trial);
  const restyles = restyleCount();
  const reach = await settled(player.doc, trial.room);
  // (the screen's size changed meanwhile: what was measured belongs to neither size, and is not
  // to be remembered under the new one, as it had been when the resize event came a frame after
  // the new size: a presenter going full screen during a rehearsal got a scene's fit for the
  // smaller window, the figures in the top half of the screen)
  if (trial.stopped() || innerWidth !== trial.screen[0] || innerHeight !== trial.screen[1]) throw new FitStopped();
  const result = { fits: !overflows(reach, trial.room) && (trial.room.height !== Infinity || tallest() <= PHONE_FIGURE * innerHeight),
    reach, parts: partsExtent(player.doc) };
  trial.last = { key, restyles, result };
  return result;
}
export const tryTrial = tryFit;

// (one on screen: a scene, ?view=<name>, may have none in it)
const onScreen = (m) => { const v = viewOf(m), r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null; return !!r && r.width > 0; };
const hasDroppable = () => !!player.doc && allModels(player.doc).some((m) => hasRole(m, "present_drop") && onScreen(m));

// A trial: the fit of one view, tried with restyleAll (its own options, not state's). stopped():
// whether to give up (throws FitStopped from the try that sees it).
export function trialOf(view, stopped = () => false) {
  return { view, scale: null, wide: new Map(), tall: 1, drop: false, tooSmall: false, room: screenRoom(), stopped,
    screen: [innerWidth, innerHeight], apply: (t) => restyleAll(t) };
}

// One full fit of a trial's view: the largest scale that fits, never below MIN_SCALE (the type
// stays presenter-sized while figures shrink: below it a figure's ticks run together). If even
// that does not fit, the parts a page marks present_drop are left out (trial.drop), and only a
// screen too small for the figures alone goes lower (trial.tooSmall). First at a comfortable
// scale (whole page, then without the parts it may leave out), then down to the smallest
// readable one. Ends with the trial applied.
export async function fitView(trial) {
  const room = trial.room;
  const search = (lo) => searchScale(lo, (s) => tryFit(trial, s, new Map()), room);
  let scale = null;
  for (const [lo, drop] of [[GOOD_SCALE, false], [GOOD_SCALE, true], [MIN_SCALE, false], [MIN_SCALE, true]]) {
    if (drop && !hasDroppable()) continue;
    trial.drop = drop;
    if ((scale = await search(lo)) !== null) break;
  }
  trial.tooSmall = scale === null;
  if (trial.tooSmall) scale = (await search(0.45)) || 0.45;
  await tryFit(trial, scale, new Map());
  // then each row's figures wider, into the room at its side (halved back while the page no
  // longer fits: a widened row may wrap)
  let wide = player.doc ? widths(shownParts(player.doc), room.width) : new Map();
  for (let i = 0; i < 3 && [...wide.values()].some((w) => w > 1); i++) {
    if ((await tryFit(trial, scale, wide)).fits) break;
    wide = new Map([...wide].map(([k, w]) => [k, i < 2 ? 1 + Math.floor((w - 1) * 50) / 100 : 1]));
  }
  // and taller, into the room left below (a row that fills the width first)
  let tall = 1;
  await tryFit(trial, scale, wide);
  const { rows, bottom } = figureRows(shownParts(player.doc));
  if (rows > 0 && bottom < room.height - 30 && room.height !== Infinity) {
    tall = Math.min(MAX_WIDE, 1 + Math.floor(98 * (room.height - 6 - bottom) / rows) / 100);
    for (let i = 0; i < 3 && tall > 1; i++) {
      if ((await tryFit(trial, scale, wide, tall)).fits) break;
      tall = i < 2 ? 1 + Math.floor(50 * (tall - 1)) / 100 : 1;
    }
  }
  return tryFit(trial, scale, wide, tall);
}
