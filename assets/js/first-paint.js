// The page built ahead of time (the default run, from the lab-doc block): on screen and
// stepping before Python. The document is themed, styled for this view and set to the link's
// t before BokehJS builds a view of it: each change made after rendering cost another layout
// and paint of the figures.
import { allModels, applyPatch, decodeDocument, deferLayout, hold, isFigure, quietAfterRender, viewOf, viewsIndexed } from "./bokeh-internals.js";
import { $, embedded, hasClass, hasRole, presenting, twoFrames, viewClass } from "./config.js";
import { watchFigures, nearView, holdUnseen } from "./culling.js";
import { fontsLoaded } from "./fonts.js";
import { whenToJoin } from "./later.js";
import { hideOwnExercise, hideUnapplied, linkAsksT, loadPrebuilt, seekFromLink } from "./link.js";
import { kids, viewNames } from "./arrange.js";
import { player } from "./player.js";
import { label } from "./readers.js";
import { postHeight } from "./embeds.js";
import { state, timings } from "./state.js";
import { styleDoc } from "./theme.js";
import { enableTransport } from "./transport.js";
import { afterRender } from "./takeover.js";
import { watchAhead } from "./ahead.js";

export async function showPrerendered() {
  if (!window.Bokeh) return;
  timings.scripts = performance.now();  // BokehJS and Panel have run
  // the default run, in the page; the link's own run where the build made it too: a patch of it
  const [own, item] = await Promise.all([loadPrebuilt(), JSON.parse($("lab-doc").textContent)]);
  const { doc: jsdoc, render } = await decodeDocument(item, $(item.target_id));
  if (own) applyPatch(jsdoc, own.patch, new Map());
  timings.decoded = performance.now();
  await fontsLoaded();  // figures measure their text as they are built: in the shipped font
  timings.fonts = performance.now();
  if (state.ownSettings) hideUnapplied(jsdoc);  // before the first paint
  if (state.sameRun) hideOwnExercise(jsdoc);
  player.attach(jsdoc);  // (first: the texts are fitted to its frames' longest labels)
  styleDoc(jsdoc);
  if (linkAsksT() && !state.ownSettings) seekFromLink(player.tMax);
  // Figures out of view are laid out but painted only once they come near it (watchFigures):
  // all start held, and those within reach of the view are let go as soon as they are placed.
  const figures = render ? allModels(jsdoc).filter(isFigure) : [];
  for (const model of figures) hold(model, true);
  let rest = [];
  if (render) rest = setAside(jsdoc);
  if (render) await render();
  timings.built = performance.now();
  viewsIndexed(() => {
    for (const model of figures) {
      const view = viewOf(model);
      if (!view || !view.el || nearView(view.el)) hold(model, false);
    }
  });
  player.describe();  // the figures' text alternatives go on their elements, now there
  state.prerendered = true;
  document.body.classList.add("lab-ready");
  afterRender(jsdoc);
  if (state.ownSettings) document.body.classList.add("lab-waiting");
  else enableTransport(true);
  watchFigures(jsdoc);
  watchAhead(jsdoc);
  // The plots are on screen once the frame after them has been painted; then those who listen
  // for new frames hear of the first ones (player.attach: the texts fitted to this layout).
  requestAnimationFrame(() => requestAnimationFrame(() => {
    timings.firstPlot = performance.now();
    player.notifyRefresh();
  }));
  // on the whole page, once it is live (or the reader scrolls to them): later.js
  // (the lesson text below waits out of sight meanwhile: lab.css)
  const wait = rest.length > 0 && !presenting() && !embedded() && !state.view;
  if (wait) document.body.classList.add("lab-parts-waiting");
  state.joined = twoFrames().then(() => whenToJoin({ wait })).then(() => joinRest(jsdoc, rest))
    .finally(() => document.body.classList.remove("lab-parts-waiting"));
}

// The first render builds the views of the top of the page only: the settings and the first
// main view (the main_view role, ui/contract.py), and what comes before them. The parts after it
// (further main views and figures, the exercise) are set aside and join just after the first
// paint (on the whole page: once it is live, later.js), in page order, one part a frame (a part
// with several figures, a child at a time).
// Building every view first had cost running-sum's first plot about a fifth (0.96 -> 0.80 s,
// measured; the whole page is built as soon as before, 1.39 -> 1.41 s). The presenter view shows every main view at once, fitted to the
// screen: there only what follows the last main view is set aside. A named view (?view=, a
// course's embed) is rendered alone: every part that does not hold it joins later, hidden
// (running-sum's "state": 0.99 -> 0.86 s). Returns what was set aside:
// [[layout, all its children, those it kept], ...]. Writes state.mainAside.
const isMain = (m) => hasRole(m, "main_view");
const mainViews = (m) => (isMain(m) ? 1 : kids(m).reduce((n, k) => n + mainViews(k), 0));
export function setAside(jsdoc, { view = state.view, present = presenting() } = {}) {
  const roots = typeof jsdoc.roots === "function" ? jsdoc.roots() : jsdoc.roots;
  const aside = [];
  const cut = (m, kept, split = false) => {  // only a layout with a list of children is cut
    if (kept.length < m.children.length) { aside.push([m, m.children, new Set(kept), split]); m.children = kept; }
  };
  state.mainAside = false;
  if (view) {
    if (!viewNames(jsdoc).includes(view)) return aside;  // the whole page is shown
    const named = viewClass(view);
    const isNamed = (m) => hasClass(m, named);
    const holds = (m) => isNamed(m) || kids(m).some(holds);
    const visit = (m) => {
      if (isNamed(m)) return;
      if (Array.isArray(m.children)) cut(m, m.children.filter(holds));
      kids(m).filter(holds).forEach(visit);
    };
    roots.filter(holds).forEach(visit);
    return aside;
  }
  const all = roots.reduce((n, r) => n + mainViews(r), 0);
  const keep = present ? all : 1;
  state.mainAside = keep < all;
  let seen = 0;  // main views passed, in page order
  const visit = (m) => {
    if (isMain(m)) { seen++; return; }
    if (!Array.isArray(m.children)) { kids(m).forEach(visit); return; }
    const children = m.children;
    for (let i = 0; i < children.length; i++) {
      if (seen >= keep) { cut(m, children.slice(0, i)); return; }
      visit(children[i]);
    }
  };
  roots.forEach(visit);
  // A part set aside with several figures in it joins a child at a time: running-sum's state
  // and memory views (six figures) had joined in one task of 120-130 ms.
  for (const [, children, kept] of [...aside]) for (const kid of children) if (!kept.has(kid)) splitPart(kid, cut);
  return aside;
}
const figuresIn = (m) => (isFigure(m) ? 1 : kids(m).reduce((n, k) => n + figuresIn(k), 0));
function splitPart(m, cut) {
  if (figuresIn(m) < 2) return;
  const children = Array.isArray(m.children) ? m.children : null;
  if (children && children.length > 1) cut(m, children.slice(0, 1), true);  // it joins with its first
  (children || kids(m)).forEach((k) => splitPart(k, cut));
}

// ... and join here, one part a frame (a part's views take up to a tenth of a second to
// build, and a step pressed meanwhile is painted in between), in their places, styled like
// the rest, their figures held until they come near the view. The page is laid out once, when
// all have joined: BokehJS lays the whole page out again each time a layout's children change,
// which made every join a long task (gates: 12 layouts of the page after its first plot, each
// longer than the part's own views; measured with their calls counted, bench/jank.py for the
// tasks). The parts join below the first main view, out of sight, meanwhile.
async function joinRest(jsdoc, rest) {
  // nothing to join: none set aside, or Python's page, rendered anew, has replaced this one
  if (!rest.length || player.doc !== jsdoc) { timings.joined = performance.now(); return; }
  const layoutOnce = deferLayout(jsdoc);
  const loud = [];  // parts on screen before a join: their after_render is not run again
  const unveil = veilJoining(rest);
  try {
    for (const [parent, children, kept, split] of rest) {
      const shown = new Set(kept);
      for (const kid of children) {
        if (shown.has(kid)) continue;
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));  // after a paint
        // (not inside a part split to join a child at a time: a figure joined there first
        // and quieted was laid out again by the steps that followed, hybrid's bars)
        if (!split) loud.push(quietAfterRender(children.filter((k) => shown.has(k)).map(viewOf)));
        shown.add(kid);
        const wasApplying = player.applying;
        player.applying = true;
        try { parent.children = children.filter((k) => shown.has(k)); } finally { player.applying = wasApplying; }
        holdUnseen(jsdoc);
        styleDoc(jsdoc);
      }
    }
    await twoFrames();  // BokehJS builds the new views asynchronously
  } finally {
    for (const restore of loud) restore();
    layoutOnce();
  }
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  unveil();
  watchFigures(jsdoc);
  player.describe();
  label(jsdoc);
  postHeight();
  timings.joined = performance.now();
}

// A part that joins is unseen until the page has been laid out with it: not yet laid out, its
// views stood at the page's full width for the frames of the join and then moved to their places
// (the late layout shift on the first screen of a 1366 x 768 laptop: CLS 0.09 on running-sum,
// 0.108 on random-features). A joined part's element is hidden as BokehJS adds it to its
// layout's shadow root (a MutationObserver's callback runs before the next paint); the parts on
// screen before, which BokehJS appends again in their order, are left as they are.
function veilJoining(rest) {
  const veiled = [], before = new Set();
  const observer = new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) {
      if (node.nodeType !== 1 || before.has(node) || node.style.visibility) continue;
      node.style.visibility = "hidden";
      veiled.push(node);
    }
  });
  for (const [parent, , kept] of rest) {
    const view = viewOf(parent);
    if (!view || !view.shadow_el) continue;
    for (const kid of kept) { const v = viewOf(kid); if (v && v.el) before.add(v.el); }
    for (const el of view.shadow_el.children) before.add(el);  // its own parts (style, title)
    observer.observe(view.shadow_el, { childList: true });
  }
  return () => {
    observer.disconnect();
    for (const node of veiled) node.style.visibility = "";
  };
}
