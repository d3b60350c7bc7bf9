"""Animated steps (assets/js/ease.js; issue 20, item 1) in Chromium, on the pages built ahead of
time (the player steps them with no Python). A source is sampled on every animation frame after
a press. Guards: Step paints values between frame t and t + 1 and ends on t + 1 exactly; Back
jumps; with prefers-reduced-motion a Step jumps; on the gates page the delta rule's overwrite
comes in its phases, in order (read back, erase, write), each on the state. Each fails with the
player's old swap of frames (no value between, no phase). Screenshots: mid-easing and each phase
(the clock held in the middle of it)."""

from __future__ import annotations

import pytest
from conftest import open_built, snap

pytestmark = pytest.mark.e2e

# Press a transport button and sample, on every animation frame for `ms` (and until the step has
# eased), the first heatmap image whose frame changes from t to t + offset (with `phased`: the
# first with phase columns). With `hold` (0 … 1) the page's clock stands still at that share of
# the step's easing while it samples (a busy machine paints a frame late, and an easing that
# comes late ends at once: without the hold, what a frame shows is up to the machine).
SAMPLE_JS = """async ([button, offset, ms, phased, hold]) => {
  const p = window.lab.player, F = p.frames.data, t = p.t;
  const sep = '@', flat = (x) => Array.from(x[0]);
  let pick = null;
  for (const [m, attrs] of p.groups) for (const [a, c] of attrs) {
    if (pick || a !== 'data.image') continue;
    if (phased && !F[c + sep + 'erase']) continue;
    if (JSON.stringify(flat(F[c][t])) !== JSON.stringify(flat(F[c][t + offset]))) pick = {m, c};
  }
  if (!pick) return null;
  const from = flat(F[pick.c][t]), to = flat(F[pick.c][t + offset]);
  const points = phased ? ['read', 'erase'].map((ph) => flat(F[pick.c + sep + ph][t + 1])) : [];
  const note = () => [...p.groups].flatMap(([m, attrs]) => attrs.filter(([a, c]) => a === 'text' && F[c + sep + 'read'])
    .map(() => m.text)).join('');
  const real = Performance.prototype.now.bind(performance);  // the page's own clock, held or not
  document.getElementById(button).click();
  if (hold !== null && p.easing) { const at = p.easing.start + hold * p.easing.ms; performance.now = () => at; }
  const samples = [];
  const start = real();
  while (real() - start < ms || (hold === null && p.easing && real() - start < 10000)) {
    await new Promise((r) => requestAnimationFrame(r));
    samples.push({v: Array.from(pick.m.data.image[0]), phase: p.phase(), note: note(), easing: !!p.easing});
  }
  delete performance.now;
  return {from, to, points, samples, t: p.t};
}"""

# Press a button, then hold the page's clock at `fraction` of the step's easing (a screenshot
# takes longer than a whole step); RELEASE_JS lets it run on.
HOLD_JS = """async ([button, fraction]) => {
  document.getElementById(button).click();
  const e = window.lab.player.easing;
  if (!e) return false;
  performance.now = () => e.start + fraction * e.ms;
  for (let i = 0; i < 3; i++) await new Promise((r) => requestAnimationFrame(r));
  return window.lab.player.phase() || 'eased';
}"""
RELEASE_JS = "() => { delete performance.now; }"


def between(sample, a, b, tol=1e-9) -> bool:
    """Some entry that changes from a to b is strictly between them in the sample."""
    return any(min(x, y) + tol < v < max(x, y) - tol for v, x, y in zip(sample, a, b) if abs(x - y) > 1e-6)


def equal(sample, target, tol=1e-12) -> bool:
    return all(abs(v - x) <= tol for v, x in zip(sample, target))


def settle(page) -> None:
    page.wait_for_function("!window.lab.player.easing")


def test_a_step_paints_values_between_frame_t_and_t_plus_1(context, server):
    visit = open_built(context, f"{server.url}running-sum.html")
    page = visit.page
    # halfway through the step, the image holds values between frame 0's and frame 1's
    got = page.evaluate(SAMPLE_JS, ["tp-step", 1, 200, False, 0.5])
    assert got is not None and got["t"] == 1
    assert got["samples"] and all(s["easing"] for s in got["samples"]), "the step does not ease"
    assert all(between(s["v"], got["from"], got["to"]) for s in got["samples"]), \
        "no painted value between frame 0 and frame 1"
    settle(page)
    # running free, it ends on frame 2 exactly
    got = page.evaluate(SAMPLE_JS, ["tp-step", 1, 600, False, None])
    assert equal(got["samples"][-1]["v"], got["to"]) and not got["samples"][-1]["easing"], \
        "it does not end on frame t + 1"
    settle(page)
    # mid-easing, held there for the picture
    assert page.evaluate(HOLD_JS, ["tp-step", 0.5]) == "eased"
    snap(page.locator(".lab-main-view").first, "animate-running-sum-mid.png")
    page.evaluate(RELEASE_JS)
    settle(page)
    assert visit.problems() == []


def test_back_jumps_and_a_jump_ends_an_easing_where_it_is(context, server):
    visit = open_built(context, f"{server.url}running-sum.html?t=3")
    page = visit.page
    page.wait_for_function("window.lab.player.t === 3")
    got = page.evaluate(SAMPLE_JS, ["tp-back", -1, 300, False, None])
    assert got is not None and got["t"] == 2
    assert all(equal(s["v"], got["to"]) and not s["easing"] for s in got["samples"]), "Back eased"
    # Back pressed while a step eases (its clock held halfway): frame t − 1 at once, the
    # easing dropped
    assert page.evaluate(HOLD_JS, ["tp-step", 0.5]) == "eased"
    got = page.evaluate(SAMPLE_JS, ["tp-back", -1, 300, False, None])
    assert got["t"] == 2 and all(equal(s["v"], got["to"]) for s in got["samples"])
    assert visit.problems() == []


def test_with_reduced_motion_a_step_jumps(browser, server):
    ctx = browser.new_context(service_workers="block", viewport={"width": 1280, "height": 900},
                              reduced_motion="reduce")
    try:
        visit = open_built(ctx, f"{server.url}running-sum.html")
        got = visit.page.evaluate(SAMPLE_JS, ["tp-step", 1, 300, False, None])
        assert got["t"] == 1
        assert all(equal(s["v"], got["to"]) and not s["easing"] for s in got["samples"]), \
            "a step eased with reduced motion"
        # ... and it is the preference that does it: allowed motion, the same page eases
        visit.page.emulate_media(reduced_motion="no-preference")
        assert visit.page.evaluate(HOLD_JS, ["tp-step", 0.5]) == "eased"
        visit.page.evaluate(RELEASE_JS)
        assert visit.problems() == []
    finally:
        ctx.close()


def test_the_delta_rules_overwrite_comes_in_its_phases_in_order(context, server):
    """gates at t = 3 -> 4 (the key of token 1 written again, so k₄ reads back a value): the
    phases read, erase, write in that order; the note names each; the state reaches D S₃ at
    the end of read, D S₃ − erased at the end of erase, S₄ at the end."""
    visit = open_built(context, f"{server.url}gates.html?t=3")
    page = visit.page
    page.wait_for_function("window.lab.player.t === 3")
    got = page.evaluate(SAMPLE_JS, ["tp-step", 1, 1600, True, None])
    assert got is not None and got["t"] == 4
    samples = got["samples"]
    order = []
    for s in samples:
        if s["phase"] and (not order or order[-1] != s["phase"]):
            order.append(s["phase"])
    assert order == ["read", "erase", "write"], order
    words = {"read": "Read back", "erase": "Erase", "write": "Write"}
    for s in samples:
        if s["phase"]:
            assert words[s["phase"]] in s["note"], (s["phase"], s["note"][:200])
    read_end, erase_end = got["points"]
    assert equal(samples[-1]["v"], got["to"]) and not samples[-1]["easing"]
    assert not equal(erase_end, got["to"]) and not equal(read_end, erase_end)
    # the clock held in the middle of erase, then of write: the state between the phase's ends
    for fraction, phase, a, b in ((0.5, "erase", read_end, erase_end),
                                  (5 / 6, "write", erase_end, got["to"])):
        page.evaluate("window.lab.player.seek(3)")
        # (each phase before it is painted for a frame first: the last samples are in it)
        last = page.evaluate(SAMPLE_JS, ["tp-step", 1, 800, True, fraction])["samples"][-1]
        assert last["phase"] == phase, last["phase"]
        assert between(last["v"], a, b), f"the {phase} is not seen happening"
        settle(page)
    # a picture of each phase, the clock held in its middle
    for i, phase in enumerate(("read", "erase", "write")):
        page.evaluate("window.lab.player.seek(3)")
        assert page.evaluate(HOLD_JS, ["tp-step", (i + 0.5) / 3]) == phase
        snap(page.locator(".lab-view-states").first, f"animate-gates-{phase}.png")
        page.evaluate(RELEASE_JS)
        settle(page)
    assert visit.problems() == []
