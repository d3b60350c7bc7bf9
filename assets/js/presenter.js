// The presenter view fits one screen: the figures' scale is the largest with which the page
// neither scrolls nor overflows sideways (from one measurement, the scale that fills the room
// below the transport; then a binary search, as a row may wrap); then their widths grow, up to
// MAX_WIDE, into what room the rows leave at the side, and their heights into the room below.
// Each try is one BokehJS layout, out of sight (the stage area is transparent while fitting;
// a refit keeps a still of what was fitted on screen: still.js).
// Same page, same screen: same result. A refit that is not full (a new document on screen:
// the takeover) keeps the scale as long as the page still fits, so nothing moves when Python
// takes over the page built ahead of time. Writes state.scale, wide, tall, drop, fitted and
// fitTries.
import { allModels, viewOf } from "./bokeh-internals.js";
import { $, hasRole, presenting } from "./config.js";
import { figureKey, figureRows, MAX_WIDE, overflows, settled, shownParts, widths } from "./fit-measure.js";
import { recallFit, rememberFit } from "./fit-memory.js";
import { fontsLoaded } from "./fonts.js";
import { player } from "./player.js";
import { state, timings } from "./state.js";
import { holdStill, releaseStill } from "./still.js";
import { restyleAll } from "./theme.js";

export { figureKey };
export const GOOD_SCALE = 0.9;  // a heatmap of 12 tokens has room for its tick labels
export const MIN_SCALE = 0.75;  // below it, a heatmap of 12 tokens runs its tick labels together (running-sum at 0.73)

// Binary search (from one measurement's guess) for the largest scale in [lo, 3.2] at which
// the page fits; null if it does not fit at lo. tryFit(scale) resolves to {fits, reach:
// [bottom, right]}; room: {top (where the stage area starts), width, height} of the screen.
export async function searchScale(lo, tryFit, room) {
  let scale = Math.max(lo, 1.45), hi = 3.2, best = null;
  if (!(await tryFit(lo)).fits) return null;
  best = lo;
  for (let i = 0; i < 6 && hi - lo > 0.03; i++) {
    const { fits, reach: [bottom, right] } = await tryFit(scale);
    if (fits) { lo = scale; best = scale; } else hi = scale;
    const high = Math.max(1, bottom - room.top), wide = Math.max(1, right - 16);
    let next = 0.985 * scale * Math.min((room.height - 6 - room.top) / high, (room.width - 18) / wide);
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;   // a row wrapped: halve the gap
    next = Math.round(next * 100) / 100;
    if (Math.abs(next - best) < 0.02) break;
    scale = next;
  }
  return best;
}

// Try one scale and width factors; resolves to whether the shown parts fit the screen.
async function tryFit(scale, wide, tall = 1) {
  state.fitTries += 1;
  state.scale = scale;
  state.wide = wide;
  state.tall = tall;
  restyleAll();
  const reach = await settled(player.doc);
  return { fits: !overflows(reach), reach };
}
const screenRoom = () => ({ top: $("lab-stage-area").getBoundingClientRect().top + scrollY, width: innerWidth, height: innerHeight });
const search = (lo) => searchScale(lo, (s) => tryFit(s, new Map()), screenRoom());

// (one on screen: a scene, ?view=<name>, may have none in it)
const onScreen = (m) => { const v = viewOf(m), r = v && v.el && v.el.isConnected ? v.el.getBoundingClientRect() : null; return !!r && r.width > 0; };
const hasDroppable = () => !!player.doc && allModels(player.doc).some((m) => hasRole(m, "present_drop") && onScreen(m));
// One quiet line at the screen's foot when the presenter view leaves something out.
function fitNote(dropped, tooSmall) {
  const el = $("lab-fit-note");
  el.textContent = tooSmall ? "Too small a screen for readable figures: zoom out (Ctrl −)"
    : dropped ? "Readouts left out to fit" : "";
  el.title = tooSmall ? "The presenter view's figures do not fit this screen at a readable size: widen the window or zoom out."
    : dropped ? "To keep the figures readable on this screen, the presenter view leaves out the readouts beside them; the full page (p) shows them." : "";
  el.hidden = !el.textContent;
}

// One full fit: the largest scale that fits, never below MIN_SCALE (the type stays
// presenter-sized while figures shrink: below it a figure's ticks run together). If even that
// does not fit, the parts a page marks present_drop are left out (said in a quiet line),
// and only a screen too small for the figures alone goes lower. First at a comfortable scale
// (whole page, then without the parts it may leave out), then down to the smallest readable one.
async function fitOnce() {
  let scale = null;
  for (const [lo, drop] of [[GOOD_SCALE, false], [GOOD_SCALE, true], [MIN_SCALE, false], [MIN_SCALE, true]]) {
    if (drop && !hasDroppable()) continue;
    state.drop = drop;
    if ((scale = await search(lo)) !== null) break;
  }
  const tooSmall = scale === null;
  if (tooSmall) scale = (await search(0.45)) || 0.45;
  fitNote(state.drop, tooSmall);
  await tryFit(scale, new Map());
  // then each row's figures wider, into the room at its side (halved back while the page no
  // longer fits: a widened row may wrap)
  let wide = player.doc ? widths(shownParts(player.doc)) : new Map();
  for (let i = 0; i < 3 && [...wide.values()].some((w) => w > 1); i++) {
    if ((await tryFit(scale, wide)).fits) break;
    wide = new Map([...wide].map(([k, w]) => [k, i < 2 ? 1 + Math.floor((w - 1) * 50) / 100 : 1]));
  }
  // and taller, into the room left below (a row that fills the width first)
  let tall = 1;
  await tryFit(scale, wide);
  const { rows, bottom } = figureRows(shownParts(player.doc));
  if (rows > 0 && bottom < innerHeight - 30) {
    tall = Math.min(MAX_WIDE, 1 + 0.98 * (innerHeight - 6 - bottom) / rows);
    for (let i = 0; i < 3 && tall > 1; i++) {
      if ((await tryFit(scale, wide, tall)).fits) break;
      tall = i < 2 ? 1 + (tall - 1) / 2 : 1;
    }
  }
  await tryFit(scale, wide, Math.round(tall * 100) / 100);
}

let fitting = null, fitAgain = false, fitFull = false;
export function fitPresenter(full) {
  if (full) fitFull = true;
  if (fitting) { fitAgain = true; return fitting; }
  fitting = (async () => {
    await fontsLoaded();  // measured in the font the page is drawn in
    await state.joined.catch(() => {});  // every part built and the page laid out (first-paint.js)
    do {
      fitAgain = false;
      const fullNow = fitFull || state.scale === null;
      fitFull = false;
      if (!presenting() || state.settingsOpen || !window.Bokeh) {
        if (state.scale !== null) { state.scale = null; state.wide = new Map(); state.tall = 1; state.drop = false; restyleAll(); }
        fitNote(false, false);
        continue;
      }
      if (!fullNow && !overflows(await settled(player.doc))) continue;
      const root = document.documentElement;
      holdStill();  // what is on the stage stays on screen meanwhile (the first fit too: it had left it blank for 1.6 s)
      root.classList.add("fitting");
      const t0 = performance.now();
      // the same page, build, settings and screen fitted before: one layout, if it still fits
      const remembered = recallFit();
      if (remembered) state.drop = remembered.drop;
      if (remembered && (await tryFit(remembered.scale, new Map(remembered.wide), remembered.tall)).fits) {
        fitNote(state.drop, remembered.scale < MIN_SCALE);
        root.classList.remove("fitting");
        timings.fit = performance.now() - t0;
        continue;
      }
      await fitOnce();
      root.classList.remove("fitting");
      timings.fit = performance.now() - t0;
      rememberFit(state);
    } while (fitAgain);
  })().finally(() => {
    // only now: a fit with nothing to wait for (the settings shown) ends before this
    // promise is even stored, and had left `fitting` set for good (no fit ever again)
    fitting = null;
    releaseStill();  // in the frame the fitted stage comes back in
    state.fitted += 1;
  });
  return fitting;
}

let fitTimer = null;
export function fitSoon(ms = 60, full = true) {
  clearTimeout(fitTimer);
  if (full) fitFull = true;
  fitTimer = setTimeout(() => fitPresenter(), ms);
}
export const watchResize = () => addEventListener("resize", () => fitSoon(200));
