// Animated steps: a step from frame t to t + 1 eases every changing number of the bound models
// (a heatmap's cells, a colour scale's limits, a marker's place, a bar's length) from frame t's
// value to frame t + 1's, in the browser, with no Python; the player (player.js) starts it and
// puts the exact frame t + 1 in at the end.
//
// Phases: a run may take a step apart (the delta rules' overwrite: read back, erase, write).
// Its frames' tags name the phases in order (ui/contract.py's FRAMES "phases"); a column
// `c` + sep + phase holds, at index t, the value `c` reaches at the end of that phase on the way
// from t − 1 to t (the last phase ends on frame t itself unless it has its own column). A binding
// with phase columns moves phase by phase, one segment each; one without moves across the whole
// step. A value that is not a number (a text, a label, a flag, a filter's indices) takes the
// value its segment leads to at the segment's start: the words say what the colours are doing.
// Nothing here runs on import.

export const STEP_MS = 250;  // one step's easing (issue 20: about 250 ms)
export const PHASE_MS = 350;  // each phase of a step taken apart: long enough to see it happen
export const PLAY_SHARE = 0.7;  // while playing: the easing takes at most this share of the period,
export const MIN_MS = 60;  // and none below this (at 60 steps/s a step is a plain frame swap)

// Cubic in-out: starts and ends at rest, so a step reads as one movement.
export const easeInOut = (u) => (u < 0.5 ? 4 * u * u * u : 1 - (-2 * u + 2) ** 3 / 2);

const typed = (x) => ArrayBuffer.isView(x) && !(x instanceof DataView);

// A value that eases: a number, a typed array (a BokehJS ndarray), or a list of such.
export function numeric(x) {
  if (typeof x === "number") return true;
  if (typed(x)) return true;
  return Array.isArray(x) && x.length > 0 && numeric(x[0]);
}

// Do two values hold the same numbers (or are they the same thing)?
export function same(a, b) {
  if (a === b) return true;
  if (typeof a === "number" && typeof b === "number") return a === b || (a !== a && b !== b);
  if ((typed(a) || Array.isArray(a)) && (typed(b) || Array.isArray(b)) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
    return true;
  }
  return false;
}

// a + (b − a) u, entry by entry; a typed array keeps its class and shape (BokehJS reads an
// image's shape from it). Where the two do not match (lengths, a NaN), b.
export function lerp(a, b, u) {
  if (typeof a === "number" && typeof b === "number") {
    return Number.isFinite(a) && Number.isFinite(b) ? a + (b - a) * u : b;
  }
  if (typed(a) && typed(b) && a.length === b.length) {
    const out = new b.constructor(b);  // a copy of b: its class, dtype and shape
    for (let i = 0; i < out.length; i++) {
      const x = a[i], y = b[i];
      out[i] = Number.isFinite(x) && Number.isFinite(y) ? x + (y - x) * u : y;
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return b.map((y, i) => lerp(a[i], y, u));
  return b;
}

// The moves of one step, from frame `from` to frame `to` of `columns`: for every binding whose
// value changes, its waypoints (one per segment) and whether it eases. `groups`: the player's
// [[model, [[attr, column], ...]], ...]; `discrete`: attributes that never ease (texts, a
// filter's indices, text alternatives); `phases`: the names, `sep` the column suffix's separator.
// Returns {moves: [{model, attr, column, points, eases, phased}], segments: n (1 without phases)}.
export function plan(groups, columns, from, to, { phases = [], sep = "@", discrete = new Set() } = {}) {
  const moves = [];
  let phased = false;
  for (const [model, attrs] of groups) {
    for (const [attr, column] of attrs) {
      const start = columns[column][from], end = columns[column][to];
      const own = phases.map((p) => columns[column + sep + p]);
      const has = own.some((c) => c !== undefined);
      const points = has ? own.map((c, i) => (c !== undefined ? c[to] : i === own.length - 1 ? end : undefined)) : [end];
      if (has) for (let i = points.length - 2; i >= 0; i--) if (points[i] === undefined) points[i] = points[i + 1];
      if (!has && same(start, end)) continue;
      phased = phased || has;
      const eases = !discrete.has(attr) && numeric(start) && points.every((p) => numeric(p));
      moves.push({ model, attr, column, points: [start, ...points], eases, phased: has });
    }
  }
  return { moves, segments: phased ? phases.length : 1 };
}

// How long a step eases (ms): 0 when motion is to be reduced, with no animation frames, or when
// playing faster than MIN_MS allows; playing, within PLAY_SHARE of the period.
export function duration(segments, { reduce = false, playing = false, speed = 8, frames = true } = {}) {
  if (reduce || !frames) return 0;
  let ms = segments > 1 ? PHASE_MS * segments : STEP_MS;
  if (playing) ms = Math.min(ms, PLAY_SHARE * 1000 / speed);
  return ms >= MIN_MS ? ms : 0;
}

// Where a move stands at time u (0 … 1 of the step) of a plan of `segments`: [value, segment].
export function at(move, u, segments) {
  const n = move.phased ? segments : 1;
  const pos = Math.min(Math.max(u, 0), 1) * n;
  const s = Math.min(Math.floor(pos), n - 1);
  const a = move.points[s], b = move.points[s + 1];
  return [move.eases ? lerp(a, b, easeInOut(pos - s)) : b, s];
}

// One step's easing. `put(groups, columns, index)` puts values in (the player's apply: one
// assignment per model), `now()` the clock (ms), `frame(fn)` the next animation frame, `done()`
// runs after the last frame (the player puts frame `to` in exactly). Returns {finish(), stop(),
// phase(), ms, start}: finish() ends it now (done() runs once), stop() drops it where it is (no
// done()), phase() names the phase on screen ("" without); ms and start (on now()'s clock).
export function ease(planned, ms, { put, now, frame, done, phases = [] }) {
  const { moves, segments } = planned;
  const start = now();
  let over = false, shownSegment = -1, painted = -1;  // painted: the segment of the last frame
  const last = new Map();  // move -> the value it was last given (a discrete one is given once)
  const tick = (inFrame) => {
    if (over) return;
    let u = ms > 0 ? (now() - start) / ms : 1;
    // A slow frame skips no phase: each is painted in at least one frame, in order (what the
    // press itself puts in is painted only with the first frame's).
    if (segments > 1 && painted < segments - 1) u = Math.min(u, (painted + 2) / segments - 1e-9);
    if (u >= 1) { finish(); return; }
    const groups = new Map(), cols = {};
    let key = 0, segment = 0;
    for (const move of moves) {
      const [value, s] = at(move, u, segments);
      if (move.phased) segment = Math.max(segment, s);
      if (!move.eases && last.get(move) === value) continue;
      last.set(move, value);
      if (!groups.has(move.model)) groups.set(move.model, []);
      groups.get(move.model).push([move.attr, `${key}`]);
      cols[`${key++}`] = [value];
    }
    shownSegment = segment;
    if (inFrame) painted = segment;
    if (key) put([...groups.entries()], cols, 0);
    frame(() => tick(true));
  };
  const finish = () => {
    if (over) return;
    over = true;
    done();
  };
  tick(false);
  return {
    finish, ms, start,
    stop() { over = true; },
    get over() { return over; },
    phase: () => (!over && segments > 1 && shownSegment >= 0 ? phases[shownSegment] || "" : ""),
  };
}
