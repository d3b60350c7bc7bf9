// Settings answered ahead of time (ui/ahead.py: running-sum's preset, the role "ahead"): each of
// their choices is the default run or a run the build made as a patch of the default document.
// Chosen before Python is live, the run goes into the document on screen in one task, as a
// change from Python's would (the player lets go of the old run, the patch goes in, the new
// frames are shown at t = 0): the page responds within a frame or two, steps, and gives that
// run's CSV; the link says it (?preset=...); and Python, whether it has started or not, is told
// what is on screen now (python.js describeAgain) and makes that page. A run's file (runs/) is
// fetched once, as the pointer or focus comes to the settings, or at the choice.
// The page's own link to its settings (settings-links.js) comes here too before Python.
// Two such settings changed together (hybrid's model A and model B) have no run of their own:
// the widgets keep the choice, the link says it, and Python is asked for it (it renders that
// page and swaps it in); meanwhile the page steps the run on screen, and says so.
import { allModels, applyPatch, deferLayout } from "./bokeh-internals.js";
import { $, hasClass, pageConfig, roles } from "./config.js";
import { askFor, choosePrebuilt, loadRun, notice, prebuiltFor, writeUrl } from "./link.js";
import { player } from "./player.js";
import { applySettings, describeAgain } from "./python.js";
import { state, timings } from "./state.js";

const runs = () => pageConfig().prebuilt || [];
const words = (list) => JSON.stringify([...list].map(String).sort());

// A select's options: labels, or [value, label] pairs (Panel's, for a setting of named objects).
const valueOf = (o) => (Array.isArray(o) ? o[0] : o);
const labelOf = (o) => (Array.isArray(o) ? o[1] : o);
// The choice a widget shows, in its own words: a button group's active label, a select's label.
export function choiceOf(m) {
  if (Array.isArray(m.labels)) return m.labels[m.active];
  const o = (m.options || []).find((x) => valueOf(x) === m.value);
  return o === undefined ? m.value : labelOf(o);
}
// The setting answered ahead of time that a widget is (the one whose choices are its own), or null.
export function entryOf(m, choices = pageConfig().choices || []) {
  const own = words(Array.isArray(m.labels) ? m.labels : (m.options || []).map(labelOf));
  return choices.find((c) => words(Object.keys(c.labels)) === own) || null;
}
// The run a choice is: one of `list`, null for the default run, undefined if none was made.
export function runFor(entry, choice, list = runs()) {
  if (!entry || !Object.prototype.hasOwnProperty.call(entry.labels, choice)) return undefined;
  const i = entry.labels[choice];
  return i < 0 ? null : list[i];
}
// The run a link's own settings ask for, where all of them were answered ahead of time: a run
// (its link's or its full settings), null for the defaults, undefined otherwise.
export function runOfLink(own, defaults = pageConfig().link.defaults, list = runs()) {
  const run = prebuiltFor(own, list);
  if (run) return run;
  const all = new URLSearchParams(defaults);
  for (const [k, v] of new URLSearchParams(own)) all.set(k, v);
  return prebuiltFor(all, [{ link: defaults }]) ? null : undefined;
}
const same = (a, b) => (a ? a.file : null) === (b ? b.file : null);
// The settings a link of its own says (`own`) once `key` is set as `run` (null: the default run) sets it.
export function withChoice(own, key, run) {
  const q = new URLSearchParams(own);
  const value = run ? new URLSearchParams(run.link).get(key) : null;
  if (value === null) q.delete(key); else q.set(key, value);
  return q.toString();
}

// ---- choosing -----------------------------------------------------------------------------------
let patching = false;  // the patches going in: their changes are no choice
let queue = Promise.resolve();  // one choice at a time, in order
let asked = "";  // what the widgets answered ahead of time say, as a link's own settings
let waiting = false;  // `asked` has no run built ahead of time: Python was asked for it
export function choose(run, doc = player.doc) {
  if (run !== undefined) asked = run ? run.link : "";
  queue = queue.then(() => chooseNow(run, doc)).catch((err) => console.error("choice:", err));
  return queue;
}
async function chooseNow(run, doc) {
  const from = state.prebuilt;
  if (run === undefined || doc !== player.doc) return;
  if (waiting && same(from, run)) {  // back to the run on screen: nothing to wait for
    settle();
    choosePrebuilt(from, from && from.csv);
    writeUrl();
    describeAgain();
  }
  if (same(from, run)) return;  // (undefined: no run of this choice)
  let back = null, ahead = null;
  const t0 = performance.now();
  try {
    [back, ahead] = await Promise.all([from && loadRun(from), run && loadRun(run)]);
  } catch (err) {  // (offline before the file was kept, or a broken copy): the choice stays, Python's
    if (!waiting) await askPython(asked, doc, `That choice could not be loaded ahead of time (${err.message}): the simulator works it out once it has started; until then the plots show the last run.`);
    return;
  }
  if (state.live || doc !== player.doc) {  // Python took over meanwhile: it makes the choice
    const notes = await applySettings(run ? run.link : pageConfig().link.defaults);
    if (notes) notice(String(notes));
    player.reset();
    return;
  }
  const t1 = performance.now();
  if (waiting) settle();
  patching = true;
  player.prepare();
  const layoutOnce = deferLayout(doc);
  try {
    if (back) applyPatch(doc, back.back, new Map());
    if (ahead) applyPatch(doc, ahead.patch, new Map());
  } finally { layoutOnce(); patching = false; }
  const t2 = performance.now();
  choosePrebuilt(run, ahead && ahead.csv);
  player.refresh();
  player.reset();
  writeUrl();
  describeAgain();
  timings.choice = { load: t1 - t0, patch: t2 - t1, show: performance.now() - t2 };  // ms: the last choice's steps
}
// A choice with no run built ahead of time (two settings changed together), or whose run could
// not be had: the widgets keep it, the link says it, Python is asked for it, and the page says
// that the plots follow once it has started.
function wait(own, doc) {
  const names = widgets(doc).filter((m) => new URLSearchParams(own).has((entryOf(m) || {}).key)).map((m) => m.title);
  const why = `${names.join(" and ")} changed together are worked out by the simulator: until it has started, the plots show the last run.`;
  queue = queue.then(() => askPython(own, doc, why)).catch((err) => console.error("choice:", err));
}
// (The notice says it; no "Computing the new run…" beside the menu: nothing computes yet.)
async function askPython(own, doc, why) {
  if (doc !== player.doc) return;
  if (state.live) {  // Python took over meanwhile: it makes the choice
    const notes = await applySettings(own);
    if (notes) notice(String(notes));
    return;
  }
  waiting = true;
  askFor(own, true);  // (so Python renders the page the link asks for: python.js pageInfo)
  $("btn-csv").disabled = true;  // (the CSV would be the run on screen's)
  notice(why);
  writeUrl();
  describeAgain();
}
function settle() {
  waiting = false;  // (the run chosen is on screen next: choosePrebuilt)
  $("btn-csv").disabled = false;
  notice("");
}
const widgets = (doc) => allModels(doc).filter((m) => hasClass(m, roles().ahead));

// Watches the document built ahead of time: a choice of a setting answered ahead of time, made
// before Python is live, is applied here (once live, Python hears of it: python.js).
export function watchAhead(doc) {
  const answered = widgets(doc);
  if (!answered.length) return;
  asked = state.prebuilt ? state.prebuilt.link : "";
  doc.on_change((event) => {
    if (patching || state.live || state.sameRun || player.applying || event.kind !== "ModelChanged") return;
    if (!answered.includes(event.model) || !["active", "value"].includes(event.attr)) return;
    const entry = entryOf(event.model), run = runFor(entry, choiceOf(event.model));
    if (run === undefined) return;
    asked = withChoice(asked, entry.key, run);
    const to = runOfLink(asked);
    if (to === undefined) wait(asked, doc);
    else choose(to, doc);
  }, false);
  // a button group's few runs are fetched as the pointer comes; a menu's many at the choice
  const eager = answered.filter((m) => Array.isArray(m.labels)).map((m) => entryOf(m))
    .flatMap((e) => (e ? Object.values(e.labels).filter((i) => i >= 0).map((i) => runs()[i]) : []));
  if (eager.length) prefetchOnIntent(eager);
}

// Runs' files, fetched when the pointer or focus comes to the settings (or the page's own link to
// them): small (tens of kB), and a choice then needs no round trip.
function prefetchOnIntent(list) {
  const cls = roles();
  const near = (event) => event.composedPath().some((el) => el && el.classList &&
    (el.classList.contains(cls.controls) || el.classList.contains(cls.settings_link)));
  const types = ["pointerover", "pointerdown", "focusin"];
  const fetchAll = (event) => {
    if (!near(event)) return;
    for (const t of types) document.removeEventListener(t, fetchAll, true);
    for (const run of list) loadRun(run).catch(() => {});  // (said at the choice, if it fails)
  };
  for (const t of types) document.addEventListener(t, fetchAll, true);
}
