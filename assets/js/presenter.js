// The presenter view fits one screen: fit-search.js searches a view's fit (a dozen layouts, out
// of sight: the stage area is transparent while fitting, and a still of what was on the stage
// stays on screen meanwhile: still.js). A fit is remembered (fit-memory.js), and every scene's
// is measured ahead of time, in idle time after a fit (rehearse), so a scene key or l (the
// lesson text beside the figures) restyles once with a fit known: one layout, painted in the
// next frame, then checked where it is (searched again only if it no longer fits). Same page,
// same screen: same result. A refit that is not full (a new document on screen: the takeover)
// keeps the scale as long as the page still fits, so nothing moves when Python takes over the
// page built ahead of time. Writes state.scale, wide, tall, drop, fitted, fitTries, rehearsing,
// rehearsed.
import { linkContract, $, presenting } from "./config.js";
import { figureKey, overflows, settled } from "./fit-measure.js";
import { recallFit, rememberFit } from "./fit-memory.js";
import { fitView, FitStopped, MIN_SCALE, screenRoom, trialOf, tryTrial } from "./fit-search.js";
import { fontsLoaded } from "./fonts.js";
import { player } from "./player.js";
import { state, timings } from "./state.js";
import { holdStill, releaseStill } from "./still.js";
import { restyleAll } from "./theme.js";

export { figureKey };
export { GOOD_SCALE, MIN_SCALE, searchScale } from "./fit-search.js";

// One quiet line at the screen's foot when the presenter view leaves something out.
function fitNote(dropped, tooSmall) {
  const el = $("lab-fit-note");
  el.textContent = tooSmall ? "Too small a screen for readable figures: zoom out (Ctrl −)"
    : dropped ? "Readouts left out to fit" : "";
  el.title = tooSmall ? "The presenter view's figures do not fit this screen at a readable size: widen the window or zoom out."
    : dropped ? "To keep the figures readable on this screen, the presenter view leaves out the readouts beside them; the full page (p) shows them." : "";
  el.hidden = !el.textContent;
}
function commit(fit) {
  Object.assign(state, { scale: fit.scale, wide: new Map(fit.wide), tall: fit.tall, drop: fit.drop });
  fitNote(fit.drop, fit.tooSmall || fit.scale < MIN_SCALE);
}

// A fit known for a view (remembered, or measured ahead of time) put in state for the caller's
// one restyle (scenes.js, refitRoom); false when there is none, or nothing is fitted yet.
export function useKnownFit(view) {
  if (!presenting() || state.settingsOpen || state.scale === null) return false;
  const known = recallFit(undefined, view);
  if (known) commit(known);
  return !!known;
}

let fitting = null, fitAgain = false, fitFull = false, joinedSeen = null;
// The parts set aside at first paint have joined (a fit waited for them): nothing to refit after.
export const joinedNow = () => joinedSeen === state.joined;
export function fitPresenter(full) {
  if (full) fitFull = true;
  stopRehearsal(true);
  if (fitting) { fitAgain = true; return fitting; }
  fitting = (async () => {
    await fontsLoaded();  // measured in the font the page is drawn in
    const joined = state.joined;
    await joined.catch(() => {});  // every part built and the page laid out (first-paint.js)
    joinedSeen = joined;
    let checked = false;
    do {
      fitAgain = false;
      const fullNow = fitFull || state.scale === null;
      fitFull = false;
      if (!presenting() || state.settingsOpen || !window.Bokeh) {
        if (state.scale !== null) { state.scale = null; state.wide = new Map(); state.tall = 1; state.drop = false; restyleAll(); }
        fitNote(false, false);
        continue;
      }
      const room = screenRoom();
      // titles, axis labels and cell numbers fitted again to the figures as now laid out (a
      // restyle with a known fit sized them from the layout before it: gates' states 14 px),
      // then checked: searched again only if the page no longer fits
      if (!fullNow) restyleAll();
      if (!fullNow && !overflows(await settled(player.doc, room), room)) continue;
      const root = document.documentElement, doc = player.doc, view = state.view;
      holdStill();  // what is on the stage stays on screen meanwhile (the first fit too: it had left it blank for 1.6 s)
      root.classList.add("fitting");
      const t0 = performance.now();
      // a scene key or another document meanwhile: this fit is given up, and the next one made
      const trial = trialOf(view, () => state.view !== view || player.doc !== doc);
      try {
        // the same page, build, settings and screen fitted before: one layout, if it still fits
        const remembered = recallFit();
        if (remembered) trial.drop = remembered.drop;
        if (remembered && (await tryTrial(trial, remembered.scale, new Map(remembered.wide), remembered.tall)).fits) {
          commit(remembered);
        } else {
          await fitView(trial);
          commit(trial);
          rememberFit(trial);
          // once more as a check (not a search): a try's titles and cell numbers were sized from
          // the layout of the try before it, another scale (running-sum with l: 9 px numbers, a
          // small title, until the rehearsal ended 5-8 s later)
          if (!checked) fitAgain = checked = true;
        }
        timings.fit = performance.now() - t0;
      } catch (e) {
        if (!(e instanceof FitStopped)) throw e;
        fitAgain = true;
      }
      root.classList.remove("fitting");
    } while (fitAgain);
  })().finally(() => {
    // only now: a fit with nothing to wait for (the settings shown) ends before this
    // promise is even stored, and had left `fitting` set for good (no fit ever again)
    fitting = null;
    state.rehearsed = false;  // until a rehearsal finds every view's fit known
    releaseStill();  // in the frame the fitted stage comes back in
    state.fitted += 1;
    placeLesson();  // (the fit's note may have moved the stage's top)
    document.dispatchEvent(new Event("lab-fitted"));  // the scene's name with it (scenes.js)
    rehearseSoon();
  });
  return fitting;
}

let fitTimer = null;
export function fitSoon(ms = 60, full = true) {
  clearTimeout(fitTimer);
  clearTimeout(rehearseTimer);
  if (full) fitFull = true;
  fitTimer = setTimeout(() => fitPresenter(), ms);
}
export function watchResize() {
  addEventListener("resize", () => { stopRehearsal(true); fitSoon(200); });
  watchRehearsal();
}

// The lesson text's column (l, lab.css) starts where the stage does: the header, the title and
// the transport keep the screen's width (beside it the transport had wrapped onto two rows and
// the pages' links were cut, the figures left 40 px less height).
function placeLesson() {
  const top = Math.max(0, Math.round($("lab-stage-area").getBoundingClientRect().top));
  document.documentElement.style.setProperty("--lesson-top", `${top}px`);
}
// The room changed (the lesson text opened or closed beside the figures: keys.js): the fit known
// for it in one restyle, or searched (behind a still of the stage).
export function refitRoom() {
  if (!presenting()) return;
  placeLesson();
  stopRehearsal(false);
  const known = useKnownFit(state.view);
  if (!known && state.fitted > 0) holdStill();
  restyleAll();
  fitSoon(0, !known);
}

// Every scene's fit (and the overview's) measured ahead of time: once a fit has ended and the
// page has been left alone REHEARSE_IDLE_MS, each view whose fit is not known for this screen
// and room is fitted out of sight, behind a still of the stage (as a scene key had been, every
// time), and the view on screen comes back. Any key, click, touch, wheel or resize stops it at
// once, in that event (the view on screen restyled back first, but for a scene key, which
// restyles itself: scenes.js); it starts again after the next quiet spell.
const REHEARSE_IDLE_MS = 1200;
let rehearsal = null, rehearseTimer = null;
function rehearseSoon(ms = REHEARSE_IDLE_MS) {
  clearTimeout(rehearseTimer);
  rehearseTimer = setTimeout(() => (typeof requestIdleCallback === "function" ? requestIdleCallback(rehearse, { timeout: 2000 }) : rehearse()), ms);
}
const views = () => ["", ...(linkContract().scenes || [])];
async function rehearse() {
  if (fitting || rehearsal || !presenting() || state.settingsOpen || state.scale === null || !window.Bokeh
      || player.playing || player.easing || document.hidden) return;
  const todo = views().filter((v) => v !== state.view && !recallFit(undefined, v));
  if (!todo.length) { state.rehearsed = true; return; }
  const doc = player.doc, view = state.view, root = document.documentElement;
  const mine = { stopped: false };
  rehearsal = mine;
  state.rehearsing = true;
  holdStill();
  root.classList.add("fitting");
  try {
    for (const v of todo) {
      const trial = trialOf(v, () => mine.stopped || player.doc !== doc || state.view !== view || player.playing);
      await fitView(trial);
      rememberFit(trial, undefined, v);
    }
  } catch (e) {
    if (!(e instanceof FitStopped)) throw e;
  } finally {
    if (!mine.stopped) endRehearsal(true);
  }
}
function endRehearsal(restyle) {
  document.documentElement.classList.remove("fitting");
  rehearsal = null;
  state.rehearsing = false;
  try {
    if (restyle) restyleAll();  // the view on screen, with its own fit
  } finally { releaseStill(); }
  // its texts sized from the last scene tried: fitted again once laid out (and then a rehearsal
  // that finds every fit known says so: state.rehearsed)
  if (restyle) fitSoon(0, false);
}
// Stop measuring ahead of time now; restyle: put the view on screen back (false: the caller
// restyles at once itself). The rehearsal's pending layout then finds it stopped.
export function stopRehearsal(restyle) {
  clearTimeout(rehearseTimer);
  if (!rehearsal) return;
  rehearsal.stopped = true;
  endRehearsal(restyle);
}
function watchRehearsal() {
  const stop = () => stopRehearsal(true);
  // a scene key stops it itself (scenes.js), restyling once for the scene
  addEventListener("keydown", (e) => { if (!(presenting() && /^[0-9]$/.test(e.key))) stop(); }, { capture: true });
  for (const type of ["pointerdown", "wheel", "touchstart"]) addEventListener(type, stop, { capture: true, passive: true });
  addEventListener("keyup", () => { if (!rehearsal) rehearseSoon(); }, { capture: true });
  addEventListener("pointerup", () => { if (!rehearsal) rehearseSoon(); }, { capture: true });
}
