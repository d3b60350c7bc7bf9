"""The gates page's animated overwrite (ui/views/overwrite.py): each compared delta rule's step in
three phases (read back, erase, write) as extra frames for the browser's player. Guards: the
phase states are the rule's own step taken apart (D S_{t−1}, then − erased, then + written lands
on sim's S_t), the frames and the player's tags carry them, and a run with no erasing rule has
none. Fails without the phase frames (no ``S{i}@erase`` columns, no ``phases`` tag)."""

from __future__ import annotations

import numpy as np
import pytest

import sim
from ui.contract import FRAMES
from ui.pages import gates_run as gr
from ui.pages import gates_update as gu
from ui.pages.gates import GatesPage
from ui.pages.gates_run import DELTA_RULES
from ui.views import overwrite

SEP = FRAMES["phase_sep"]


# the delta rules the page offers (every delta rule of sim, Gated DeltaNet-2 included)
OFFERED = [r for r in DELTA_RULES if r in GatesPage.param.rules.objects]


@pytest.mark.parametrize("rule", OFFERED)
@pytest.mark.parametrize("dependent", [False, True])
def test_the_phases_are_the_rules_own_step_taken_apart(rule, dependent):
    page = GatesPage(rules=["linear", rule], d=4, tokens=10, data_dependent_gates=dependent,
                     stream="random", seed=3)
    data = page.run.data
    read, erase = data[f"S1{SEP}read"], data[f"S1{SEP}erase"]  # (T + 1, d, d)
    states = data["S1"]  # frames: S_0 = 0, S_1 … S_T (sim's trace)
    assert read.shape == erase.shape == states.shape
    assert np.all(read[0] == 0) and np.all(erase[0] == 0)
    # the write phase ends on the rule's S_t: what the erase phase left, plus the written part
    T = page.tokens
    for t in range(1, T + 1):
        moved = np.abs(erase[t] - states[t]).max()  # something was written at every token
        assert moved > 1e-6, (rule, t)
    # read: S_{t−1} decayed by the rule's own gate; for the plain delta rule nothing decays
    if rule == "deltanet":
        assert np.allclose(read[1:], states[:-1], atol=1e-12)
    else:
        assert not np.allclose(read[2:], states[1:-1])  # a decay < 1 shrinks the state
    # the step, S_t = D S_{t−1} − erased + written, exact to rounding (sim's numbers)
    gates = page.gates(T)
    k = sim.l2_normalize(page.token_stream().k)
    K, V, kw = gr.rule_run(page, rule, k, page.token_stream().v, gates)
    trace = sim.run(rule, k, K, V, **kw)
    _, _, erased, written, _ = gu.taken_apart(rule, trace, K, V, kw)
    assert np.allclose(states[1:], trace.states, atol=1e-12)
    assert np.allclose(erase[1:] + written, trace.states, atol=1e-10)
    assert np.allclose(read[1:] - erased, erase[1:], atol=1e-12)


def test_the_frames_and_tags_carry_the_phases_and_the_note_names_them():
    page = GatesPage()  # linear, RetNet, DeltaNet, Gated DeltaNet
    tags = page.frames.tags[0]
    assert tags[FRAMES["phases"]] == list(overwrite.PHASES) == ["read", "erase", "write"]
    columns = set(page.frames.data)
    slots = {i for i, r in enumerate(page.rules) if r in DELTA_RULES}
    assert slots == {2, 3}
    heat = {i: page.views.index(page.heatmaps[i]) for i in range(4)}
    for i in range(4):
        for phase in ("read", "erase"):
            assert (f"{heat[i]}:image{SEP}{phase}" in columns) == (i in slots), (i, phase)
    # the rows the key weighs, outlined in the read and erase phases (0 at rest)
    k4 = np.abs(sim.l2_normalize(page.token_stream().k)[3])
    assert np.allclose(page.frames.data[f"{heat[2]}:focus{SEP}read"][4], k4 / k4.max())
    assert page.frames.data[f"{heat[2]}:focus"][4] == [0.0] * 4
    assert f"{heat[0]}:focus{SEP}read" not in columns
    note = page.views.index(page.phase_note)
    texts = {p: page.frames.data[f"{note}:text{SEP}{p}"][4] for p in overwrite.PHASES}
    assert "Read back" in texts["read"] and "Erase" in texts["erase"] and "Write" in texts["write"]
    assert "Sᵀk₄ = (" in texts["read"]
    # Python's own show(t) (the page built ahead of time) ignores the phases: frame t only
    page.show(4)
    assert "overwrites in three phases" in page.phase_note.div.text


def test_a_run_without_an_erasing_rule_has_no_phases():
    page = GatesPage(rules=["linear", "retnet"])
    assert not [c for c in page.frames.data if SEP in c]
    assert "None of the rules compared erases" in page.run.data["overwrite_text"][1]
