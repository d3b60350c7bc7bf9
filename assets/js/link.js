// The link: the shell's own keys (t, embed, present, theme, view, speed), read and checked by
// the link contract (ui/urlstate.py, lab-config's "link"), and written back as the page
// changes; and the notices that name what a link asked for and did not get.
// The settings part of the link belongs to Python once it is live (python.js: setSettings);
// t to the player; the view flags to the shell. Before Python, the link's settings are kept
// exactly as they came.
import { allModels } from "./bokeh-internals.js";
import { $, hasClass, linkContract, pageConfig, presenting, roles } from "./config.js";
import { player } from "./player.js";
import { state } from "./state.js";

// ---- notices (plain text only: nothing from a link or a file is ever read as markup) ------
// The shell's (its own keys of the link) and Python's (the settings) side by side: neither
// replaces the other. Bounded: at most max_notices sentences, values cut and invisible
// characters shown as escapes (what is quoted is what was given).
const notes = { shell: [], python: "" };
function renderNotice() {
  const all = [...notes.shell, notes.python].filter(Boolean), max = linkContract().max_notices;
  let text = all.slice(0, max).join(" ");
  if (all.length > max) text += ` … and ${all.length - max} more.`;
  $("lab-notice-text").textContent = text;
  $("lab-notice").hidden = !text;
}
export const shellNote = (text) => { notes.shell.push(text); renderNotice(); };
export const notice = (text) => { notes.python = String(text || ""); renderNotice(); };  // Python's
export function watchNotices() {
  $("lab-notice-close").onclick = () => { notes.shell = []; notes.python = ""; renderNotice(); };
}
export function shown(raw, max = linkContract().max_value_shown) {
  const s = [...String(raw).slice(0, max + 8)].map((ch) =>
    /[\p{C}\p{Z}]/u.test(ch) && ch !== " " ? `\\u${ch.codePointAt(0).toString(16).padStart(4, "0")}` : ch).join("");
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

// ---- the shell's keys -------------------------------------------------------------------------
export const isShellKey = (k) => Object.prototype.hasOwnProperty.call(linkContract().shell, k);
export function accepts(spec, tMax, views = linkContract().views) {
  if (spec.accepts === "flag") return `${spec.on[0]} or ${spec.off[0]}`;
  if (spec.accepts === "choice") return `one of ${spec.values.join(", ")}`;
  if (spec.accepts === "int") return `a whole number from ${spec.min} to ${tMax !== undefined ? tMax : "the run's last t"}`;
  if (spec.accepts === "number") return `a number from ${spec.min} to ${spec.max}`;
  return views.length ? `one of this page's views: ${views.join(", ")}` : "nothing: this page has no named views";
}
export function acceptShell(spec, raw, views = linkContract().views) {
  const v = raw.trim().toLowerCase();
  if (spec.accepts === "flag") return spec.on.includes(v) ? "1" : spec.off.includes(v) ? "0" : null;
  if (spec.accepts === "choice") return spec.values.includes(v) ? v : null;
  if (spec.accepts === "int") return /^\d{1,9}$/.test(v) && Number(v) >= spec.min ? String(Number(v)) : null;
  if (spec.accepts === "number") {
    const n = Number(v);
    return /^\d{1,3}(\.\d{1,3})?$/.test(v) && n >= spec.min && n <= spec.max ? String(n) : null;
  }
  return views.includes(raw) ? raw : null;  // a view's name, exactly
}

let query = null;  // the link as the page was opened
let linkT = null;  // the link's t as it came (state.shell.t may be dropped later)
// Writes state.shell, state.ownSettings and state.view: once, first thing (then setView).
export function readLink(search = location.search) {
  const link = linkContract();
  query = new URLSearchParams(search);
  const out = {};
  for (const [k, spec] of Object.entries(link.shell)) {
    const all = query.getAll(k);
    if (!all.length) continue;
    if (all.length > 1) shellNote(`The link gives ${k} ${all.length.toLocaleString("en")} times; the last one counts.`);
    const raw = all[all.length - 1], ok = acceptShell(spec, raw);
    if (ok === null) {
      const tMax = spec.accepts === "int" && !link.settings.some((s) => query.has(s)) ? pageConfig().prerender.t_max : undefined;
      shellNote(`Ignored ${k}=${shown(raw)}: expected ${accepts(spec, tMax)}.`);
    } else out[k] = ok;
  }
  state.shell = out;
  linkT = out.t !== undefined ? out.t : null;
  // Does the link ask for settings other than the page built ahead of time shows?
  const defaults = new URLSearchParams(link.defaults);
  const own = link.settings.filter((k) => query.has(k) && query.getAll(k).pop() !== defaults.get(k));
  state.ownSettings = own.length > 0;
  // ... unless the page built that run ahead of time too (a link the page itself offers, or the
  // link such a page writes: ui/page.py Page.offered): then it is shown at first paint, and
  // steps with no Python (loadPrebuilt)
  state.prebuilt = state.ownSettings ? prebuiltFor(linkSettings()) : null;
  // ... or asks only for settings that change no run (an exercise's number: Page.no_recompute):
  // the default run steps at once, and only the exercise waits for Python (hideOwnExercise)
  state.sameRun = state.ownSettings && !state.prebuilt && own.every((k) => (link.same_run || []).includes(k));
  if (state.prebuilt || state.sameRun) state.ownSettings = false;
  state.view = out.view || "";
}
// The run built ahead of time whose settings are exactly the link's own (the offered link's,
// or all of that run's), or null. A key given twice counts once, its last value.
const settingsOf = (q) => JSON.stringify([...new Map([...new URLSearchParams(q)])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
export function prebuiltFor(own, runs = pageConfig().prebuilt || []) {
  const wanted = settingsOf(own);
  return runs.find((run) => settingsOf(run.link) === wanted || settingsOf(run.query) === wanted) || null;
}
// A run built ahead of time, fetched once (runs/ of the site): {csv, t_max, patch: the default
// document to it, back: it to the default document} (ui/ahead.py). Rejects if it cannot be had.
const fetched = new Map();
export function loadRun(run, get = fetch) {
  if (!fetched.has(run.file)) {
    fetched.set(run.file, get(run.file).then((response) => {
      if (!response.ok) throw new Error(`answered ${response.status}`);
      return response.json();
    }).catch((err) => { fetched.delete(run.file); throw err; }));
  }
  return fetched.get(run.file);
}
// The link's run, for the first paint: its CSV kept in state.prebuilt; null if it cannot be had
// (the link's settings then wait for Python, as any other link's).
export async function loadPrebuilt(get = fetch) {
  const run = state.prebuilt;
  if (!run) return null;
  try {
    const data = await loadRun(run, get);
    state.prebuilt = { ...run, csv: data.csv };
    return data;
  } catch (err) {
    console.warn(`The run built ahead of time for this link (${run.file}) could not be loaded (${err.message}): its settings wait for Python.`);
    state.prebuilt = null;
    state.ownSettings = true;
    return null;
  }
}
// A run built ahead of time is on screen now (a choice answered ahead of time, ahead.js): it
// (null: the default run), its CSV; the link's settings are its own, and its t is no longer asked.
export function choosePrebuilt(run, csv) {
  state.prebuilt = run ? { ...run, csv } : null;
  askFor(run ? run.link : "");
}
// The link's own settings are `own` now (a choice made on the page), and its t is no longer asked;
// `waits`: no run built ahead of time is theirs (ahead.js: Python renders the page they ask for).
export function askFor(own, waits = false) {
  state.ownSettings = waits;
  for (const k of [...query.keys()]) if (!isShellKey(k)) query.delete(k);
  for (const [k, v] of new URLSearchParams(own)) query.set(k, v);
  linkT = null;
  const { t: _asked, ...rest } = state.shell;
  state.shell = rest;
}
export const linkAsksT = () => linkT !== null;
// A setting that does not apply under the link's settings (Page.applies_by_link, in the link
// contract) is hidden in the page built ahead of time before its first paint, as the live page
// hides it (hybrid's state dtype with two Llama-style models had shown until Python took over).
export function hideUnapplied(doc) {
  const defaults = new URLSearchParams(linkContract().defaults);
  const value = (k) => (query.has(k) ? query.getAll(k).pop() : defaults.get(k));
  for (const rule of Object.values(linkContract().applies || {})) {
    if (rule.keys.some((k) => rule.values.includes(value(k)))) continue;
    for (const m of allModels(doc)) if (hasClass(m, rule.class)) m.visible = false;
  }
}
// The link's own exercise (state.sameRun) is Python's to show: the default exercise's box is
// hidden in the page built ahead of time, before its first paint; and the settings answered
// ahead of time wait for Python too (their runs were made with the default exercise: ahead.js).
export function hideOwnExercise(doc) {
  for (const m of allModels(doc)) {
    if (hasClass(m, roles().exercise)) m.visible = false;
    if (hasClass(m, roles().ahead)) m.disabled = true;
  }
}
// The view shown from now on (a presenter scene, scenes.js): state.view and the link's view
// key ("" for the whole page, or the presenter view's overview).
export function setView(name) {
  const { view: _old, ...rest } = state.shell;
  state.shell = name ? { ...rest, view: name } : rest;
  state.view = name || "";
  writeUrl();
}
// The link's own settings (its keys that are not the shell's).
export function linkSettings() {
  const own = new URLSearchParams(query);
  for (const k of Object.keys(linkContract().shell)) own.delete(k);
  return own;
}

// The link's t (a whole number: readLink), checked against what this run reaches; one past the
// end is named and dropped from the link.
export function seekFromLink(tMax) {
  if (state.shell.t === undefined) return;
  if (Number(state.shell.t) > tMax) {
    shellNote(`Ignored t=${shown(state.shell.t)}: expected ${accepts(linkContract().shell.t, tMax)}.`);
    const { t: _dropped, ...rest } = state.shell;
    state.shell = rest;
    urlLater();
    return;
  }
  player.seek(Number(state.shell.t));
}

// ---- writing the link ---------------------------------------------------------------------
let urlTimer = null;
export function writeUrl() {
  urlTimer = null;
  const shell = state.shell;
  const q = new URLSearchParams(state.settingsQuery !== null ? state.settingsQuery : "");
  if (state.settingsQuery === null) for (const [k, v] of query) if (!isShellKey(k)) q.set(k, v);
  if (!(state.ownSettings && !state.live)) q.set("t", String(player.t));
  else if (shell.t !== undefined) q.set("t", shell.t);
  for (const k of ["embed", "theme", "view"]) if (shell[k] !== undefined) q.set(k, shell[k]);
  if (presenting()) q.set("present", "1");
  const speed = $("tp-speed").value;
  if (speed !== "8") q.set("speed", speed);  // a presenter's pace travels
  const url = `${location.pathname}?${q.toString().replace(/%2C/g, ",")}${location.hash}`;
  if (url !== location.pathname + location.search + location.hash) history.replaceState(null, "", url);
}
// While playing, the link follows at most every 250 ms, and only in a frame's spare time:
// a history update costs 2-5 ms (measured), and one that came after a step's work made that
// frame miss its paint (at 60 steps/s, four frames a second). Pausing writes it at once.
const idle = (fn) => (window.requestIdleCallback || ((f) => setTimeout(() => f({ timeRemaining: () => 50 }), 0)))(fn);
const SPARE_MS = 8;
function whenSpare() {
  idle((deadline) => {
    if (urlTimer === null) return;  // written meanwhile
    if (!player.playing || deadline.timeRemaining() >= SPARE_MS) writeUrl();
    else whenSpare();
  });
}
export function urlLater() {
  if (!player.playing) { clearTimeout(urlTimer); writeUrl(); }
  else if (urlTimer === null) urlTimer = setTimeout(whenSpare, 250);
}
