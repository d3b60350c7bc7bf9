// assets/js/later.js: when the parts set aside at first paint join. On the whole page they wait
// for the page to go live (letJoin), a reader scrolling or printing, or the fallback timer; the
// presenter view, embeds and named views do not wait.
import test from "node:test";
import assert from "node:assert/strict";
import { letJoin, resetJoin, whenToJoin } from "../../assets/js/later.js";

// A window that records its listeners and fires one by name.
function fakeWindow() {
  const listeners = new Map();
  return {
    listeners,
    addEventListener(name, fn) { listeners.set(name, fn); },
    removeEventListener(name) { listeners.delete(name); },
    fire(name) { const fn = listeners.get(name); if (fn) fn({ type: name }); },
  };
}
const settled = async (promise) => {
  let done = false;
  promise.then(() => { done = true; });
  await new Promise((r) => setTimeout(r, 0));
  return done;
};

test("without waiting (presenter, embed, named view) the parts may join at once", async () => {
  resetJoin();
  assert.equal(await settled(whenToJoin({ wait: false, win: fakeWindow() })), true);
});

test("on the whole page they wait, and join once the page is live", async () => {
  resetJoin();
  const win = fakeWindow();
  const gate = whenToJoin({ win, fallbackMs: 60_000 });
  assert.equal(await settled(gate), false);
  assert.deepEqual([...win.listeners.keys()].sort(), ["beforeprint", "scroll", "touchmove", "wheel"]);
  letJoin();
  assert.equal(await settled(gate), true);
  assert.equal(win.listeners.size, 0, "the reader's events are no longer watched");
  assert.equal(whenToJoin({ win }), gate, "one gate per page");
});

test("a reader's scroll, wheel, touch or print lets them join before the page is live", async () => {
  for (const name of ["scroll", "wheel", "touchmove", "beforeprint"]) {
    resetJoin();
    const win = fakeWindow();
    const gate = whenToJoin({ win, fallbackMs: 60_000 });
    assert.equal(await settled(gate), false, name);
    win.fire(name);
    assert.equal(await settled(gate), true, name);
  }
});

test("if Python failed before the first paint, they join at once", async () => {
  resetJoin();
  letJoin();
  assert.equal(await settled(whenToJoin({ win: fakeWindow(), fallbackMs: 60_000 })), true);
});

test("with nothing else, the fallback timer lets them join", async () => {
  resetJoin();
  const gate = whenToJoin({ win: fakeWindow(), fallbackMs: 5 });
  assert.equal(await settled(gate), false);
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(await settled(gate), true);
  resetJoin();
});
