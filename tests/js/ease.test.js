// Animated steps (assets/js/ease.js, and the player's use of it) in node, with fake sources and
// a fake clock: a step passes through values between frame t and t + 1 and ends on t + 1
// exactly; the phases of a step taken apart come in order; Back, the timeline and reduced
// motion jump; playing keeps its rate.
import test from "node:test";
import assert from "node:assert/strict";
import { at, duration, ease, easeInOut, lerp, numeric, plan, PHASE_MS, STEP_MS } from "../../assets/js/ease.js";
import { apply, group, player } from "../../assets/js/player.js";
import { fakeDoc, loadConfig, model, source } from "./fixture.js";

const config = loadConfig();
const F = config.contract.frames;

// A clock and an animation-frame queue the test advances by hand.
function fakeClock() {
  const clock = { ms: 0, queue: [] };
  clock.now = () => clock.ms;
  clock.frame = (fn) => clock.queue.push(fn);
  clock.run = (ms) => { clock.ms += ms; const q = clock.queue.splice(0); for (const fn of q) fn(clock.ms); };
  return clock;
}

// An ndarray as BokehJS has one: a typed array with a shape.
class NDArray extends Float64Array {
  constructor(init, shape) { super(init); this.shape = shape ?? init.shape ?? [this.length]; }
}

test("lerp goes between numbers, lists and typed arrays, keeping an ndarray's class and shape", () => {
  assert.equal(lerp(0, 10, 0.25), 2.5);
  assert.deepEqual(lerp([0, 4], [4, 8], 0.5), [2, 6]);
  const a = new NDArray([0, 0, 0, 0], [2, 2]), b = new NDArray([4, -4, 8, 1], [2, 2]);
  const mid = lerp([a], [b], 0.5)[0];
  assert.ok(mid instanceof NDArray);
  assert.deepEqual(mid.shape, [2, 2]);
  assert.deepEqual([...mid], [2, -2, 4, 0.5]);
  assert.equal(lerp(NaN, 3, 0.5), 3);
  assert.equal(lerp("a", "b", 0.1), "b");
  assert.deepEqual([numeric(["0.1", null]), numeric([null, "x"]), numeric([a]), numeric(true)], [false, false, true, false]);
  assert.equal(easeInOut(0), 0);
  assert.equal(easeInOut(1), 1);
  assert.equal(easeInOut(0.5), 0.5);
});

test("a step eases: values between frame t and t + 1 on the way, frame t + 1 exactly at the end", () => {
  const clock = fakeClock();
  const span = model({ location: 0 }), cells = source({ image: [new NDArray([0, 0], [1, 2])], label: ["0"] });
  const columns = { m: [0, 10], img: [[new NDArray([0, 0], [1, 2])], [new NDArray([2, 4], [1, 2])]], lab: [["0"], ["9"]] };
  const groups = group([[span, "location", "m"], [cells, `${F.data_prefix}image`, "img"], [cells, `${F.data_prefix}label`, "lab"]]);
  const planned = plan(groups, columns, 0, 1);
  assert.equal(planned.moves.length, 3);
  let ended = 0;
  const e = ease(planned, STEP_MS, { put: apply, now: clock.now, frame: clock.frame, done: () => { ended++; apply(groups, columns, 1); } });
  assert.deepEqual(cells.data.label, ["9"], "a text takes its new value at the start");
  assert.equal(span.location, 0);
  clock.run(STEP_MS / 2);
  assert.equal(span.location, 5);
  assert.deepEqual([...cells.data.image[0]], [1, 2]);
  clock.run(STEP_MS / 4);
  assert.ok(span.location > 5 && span.location < 10, span.location);
  clock.run(STEP_MS);
  assert.equal(ended, 1);
  assert.ok(e.over);
  assert.equal(span.location, 10);
  assert.equal(cells.data.image[0], columns.img[1][0], "the frame's own array at the end");
  assert.equal(clock.queue.length, 0, "no frame asked for after the end");
});

test("a step taken apart moves phase by phase, in order, and names the phase on screen", () => {
  const clock = fakeClock();
  const state = model({ value: 0 }), other = model({ value: 0 }), note = model({ text: "rest" });
  // state: 0 -> (read back) 0 -> (erase) -4 -> (write) 6; other has no phases: 0 -> 9 over the whole step
  const columns = { s: [0, 6], [`s${F.phase_sep}read`]: [0, 0], [`s${F.phase_sep}erase`]: [0, -4],
    o: [0, 9], n: ["rest", "rest"], [`n${F.phase_sep}read`]: ["", "reading"], [`n${F.phase_sep}erase`]: ["", "erasing"],
    [`n${F.phase_sep}write`]: ["", "writing"] };
  const phases = ["read", "erase", "write"];
  const groups = group([[state, "value", "s"], [other, "value", "o"], [note, "text", "n"]]);
  const planned = plan(groups, columns, 0, 1, { phases, sep: F.phase_sep, discrete: new Set([F.text]) });
  assert.equal(planned.segments, 3);
  const ms = duration(planned.segments);
  assert.equal(ms, 3 * PHASE_MS);
  const seen = [];
  const e = ease(planned, ms, { put: apply, now: clock.now, frame: clock.frame, phases, done: () => apply(groups, columns, 1) });
  for (let i = 0; i < 12; i++) {
    seen.push([e.phase(), note.text, state.value]);
    clock.run(ms / 12);
  }
  const order = [...new Set(seen.map(([p]) => p))];
  assert.deepEqual(order, phases);
  assert.deepEqual([...new Set(seen.map(([, n]) => n))], ["reading", "erasing", "writing"]);
  const [, , atErase] = seen[Math.round(12 * 2 / 3)];  // the end of the erase phase
  assert.equal(atErase, -4);
  assert.ok(seen.some(([p, , v]) => p === "erase" && v < 0 && v > -4), "erasing passes between");
  assert.deepEqual([state.value, other.value, note.text, e.phase()], [6, 9, "rest", ""]);
  assert.deepEqual(at(planned.moves[1], 0.5, 3), [4.5, 0], "a move without phases spans the step");
});

test("no easing when motion is reduced, without animation frames, or playing fast; playing keeps its period", () => {
  assert.equal(duration(1, { reduce: true }), 0);
  assert.equal(duration(3, { frames: false }), 0);
  assert.equal(duration(1, { playing: true, speed: 60 }), 0);
  const at8 = duration(1, { playing: true, speed: 8 });
  assert.ok(at8 > 0 && at8 < 1000 / 8, at8);
  assert.ok(duration(3, { playing: true, speed: 4 }) < 1000 / 4);
});

// The player with a fake window: rAF from the clock, matchMedia for reduced motion.
function withWindow(clock, reduce, fn) {
  const saved = { raf: globalThis.requestAnimationFrame, mm: globalThis.matchMedia, perf: globalThis.performance };
  globalThis.requestAnimationFrame = clock.frame;
  globalThis.matchMedia = () => ({ matches: reduce });
  Object.defineProperty(globalThis, "performance", { value: { now: clock.now }, configurable: true, writable: true });
  try { fn(); } finally {
    globalThis.requestAnimationFrame = saved.raf;
    globalThis.matchMedia = saved.mm;
    Object.defineProperty(globalThis, "performance", { value: saved.perf, configurable: true, writable: true });
  }
}

function stepper() {
  const span = model({ location: -1 });
  const frames = Object.assign(source({ t: [0, 1, 2, 3], "0:m": [0, 10, 20, 30] }), { name: F.source });
  frames.tags = [{ bindings: [[span, "location", "0:m"]], stops: [] }];
  player.listeners = [];
  player.playing = false;
  player.t = 0;
  player.attach(fakeDoc([frames]));
  return span;
}

test("the player's Step eases, Back and the timeline jump, a second Step finishes the first", () => {
  const clock = fakeClock();
  withWindow(clock, false, () => {
    const span = stepper();
    player.step();
    assert.equal(player.t, 1);
    assert.equal(span.location, 0, "still frame 0 at the press");
    clock.run(STEP_MS / 2);
    assert.ok(span.location > 0 && span.location < 10, span.location);
    player.step();  // during the easing: the first ends on its frame, the second starts there
    assert.equal(player.t, 2);
    assert.equal(span.location, 10);
    player.back();  // a jump: frame 1 at once, nothing easing
    assert.equal(span.location, 10);
    assert.equal(player.easing, null);
    clock.run(STEP_MS);
    assert.equal(span.location, 10, "the dropped easing never moves it again");
    player.step();
    clock.run(STEP_MS / 2);
    player.seek(0);
    assert.equal(span.location, 0);
    clock.run(STEP_MS);
    assert.equal(span.location, 0);
  });
});

test("with reduced motion a step jumps to frame t + 1", () => {
  const clock = fakeClock();
  withWindow(clock, true, () => {
    const span = stepper();
    player.step();
    assert.equal(span.location, 10);
    assert.equal(player.easing, null);
    assert.equal(clock.queue.length, 0);
  });
});

test("a slow frame skips no phase: each phase is on screen for a frame, in order", () => {
  const clock = fakeClock();
  const state = model({ value: 0 });
  const columns = { s: [0, 6], [`s${F.phase_sep}read`]: [0, 1], [`s${F.phase_sep}erase`]: [0, -4] };
  const phases = ["read", "erase", "write"];
  const planned = plan(group([[state, "value", "s"]]), columns, 0, 1, { phases, sep: F.phase_sep });
  const e = ease(planned, 900, { put: apply, now: clock.now, frame: clock.frame, phases, done: () => { state.value = 6; } });
  const seen = [];
  clock.run(2000);  // the first frame comes late, past the whole step: the press's phase is painted
  seen.push(e.phase());
  clock.run(16);
  seen.push(e.phase());
  clock.run(16);
  seen.push(e.phase());
  clock.run(16);
  assert.deepEqual(seen, ["read", "erase", "write"]);
  assert.ok(e.over);
  assert.equal(state.value, 6);
});
