"""The state-space page without a browser: its states and outputs against sim's selective scan
and the Mamba-2 rule, and what its readouts say at t."""

from __future__ import annotations

import html

import numpy as np
import pytest
from helpers import heat

import sim
from ui.fmt import num
from ui.pages.state_space import StateSpacePage, inverse_softplus, softplus
from ui.urlstate import apply_query, to_query


@pytest.fixture
def page(build) -> StateSpacePage:
    return build(StateSpacePage)


def test_mamba_is_the_selective_scan_token_by_token(page):
    x = page.inputs()
    u, T, d, N = x["u"], 24, 4, 4
    assert u.shape == (T, d) and np.all(np.abs(u[::6]) == 1)  # a pulse every 6 tokens
    delta = softplus(inverse_softplus(0.1) + 3.0 * np.abs(u))
    np.testing.assert_array_equal(x["delta_mamba"], delta)
    A = -np.tile(np.arange(1.0, N + 1), (d, 1))
    y, h = sim.selective_scan(u, delta, A, x["B"], x["C"], np.ones(d))
    np.testing.assert_array_equal(page.run.data["h_mamba"][1:], h)
    np.testing.assert_array_equal(page.run.data["y_mamba"], y[:, 0])
    # the plain recurrence, written out: h_t = exp(ΔA) h_{t−1} + Δ B u, y = Cᵀh + D u
    state = np.zeros((d, N))
    for t in range(T):
        state = np.exp(delta[t][:, None] * A) * state + delta[t][:, None] * x["B"][t] * u[t][:, None]
        np.testing.assert_allclose(page.run.data["h_mamba"][t + 1], state, atol=1e-14)
        np.testing.assert_allclose(page.run.data["y_mamba"][t], state[0] @ x["C"][t] + u[t, 0],
                                   atol=1e-14)
    np.testing.assert_array_equal(page.run.data["decay"][1:], np.exp(delta[:, :, None] * A))


def test_s4d_is_time_invariant_and_mamba2_is_the_gates_pages_rule(page):
    x = page.inputs()
    u = x["u"]
    assert np.all(x["delta_s4d"] == 0.1) and np.all(x["B0"] == x["B0"][0])
    # Mamba-2: S_t = a_t S_{t−1} + B_t (Δ_t u_t)ᵀ, o = S_tᵀ C_t, a_t = exp(−Δ_t), plus D u
    dt = x["delta_mamba2"][:, 0]
    assert np.all(x["delta_mamba2"] == dt[:, None])  # one Δ per token for the head
    tr = sim.run("mamba2", x["C"], x["B"], dt[:, None] * u, alpha=np.exp(-dt))
    np.testing.assert_allclose(page.run.data["h_mamba2"][1:], np.swapaxes(tr.states, 1, 2),
                               atol=1e-14)
    np.testing.assert_allclose(page.run.data["y_mamba2"], tr.outputs[:, 0] + u[:, 0], atol=1e-14)
    # S4D: one linear time-invariant filter, so its output is a convolution of the input
    A = np.arange(1.0, 5.0)
    kernel = np.array([(x["C0"][0] * np.exp(-0.1 * A) ** j * 0.1 * x["B0"][0]).sum()
                       for j in range(24)])
    conv = np.array([sum(kernel[j] * u[t - j, 0] for j in range(t + 1)) for t in range(24)])
    np.testing.assert_allclose(page.run.data["y_s4d"], conv + u[:, 0], atol=1e-12)


def test_no_selectivity_makes_mamba_time_invariant_in_delta(build):
    page = build(StateSpacePage, selectivity=0.0)
    assert np.allclose(page.run.data["delta1_mamba"], 0.1)
    np.testing.assert_allclose(page.run.data["decay"][1:], np.broadcast_to(page.run.data["decay"][1], (24, 4, 4)))


def test_show_puts_frame_t_into_the_views_and_readouts(page):
    page.show(7)  # the second pulse
    np.testing.assert_array_equal(heat(page.h["mamba"]), page.run.data["h_mamba"][7])
    np.testing.assert_array_equal(heat(page.decay), page.run.data["decay"][7])
    delta = page.run.data["delta1_mamba"][6]
    assert delta > 0.5
    assert f"Mamba's Δ₁ = {num(delta)} (large: the state gives way to the input)" in \
        page.caption.div.text
    y = page.run.data["y_mamba"][6]
    assert f"= {num(y)}." in page.caption.div.text
    page.show(8)
    assert "(small: the state keeps what it had)" in page.caption.div.text
    assert f"<td>{num(page.run.data['y_s4d'][7])}</td>" in page.models_text.div.text
    assert page.named_stops() == [("start", 0), ("the first pulse", 1), ("the second pulse", 7)]


def test_link_round_trip_and_csv(page):
    page.param.update(stream="random", channels=3, state_size=5, tokens=10, step=0.3,
                      selectivity=1.5, skip=0.5, seed=4)
    fresh = StateSpacePage()
    assert apply_query(fresh, to_query(page)) == []
    assert fresh.settings_now() == page.settings_now()
    lines = page.csv().strip().splitlines()
    assert lines[0] == "t,model,channel,u,delta,y" and len(lines) == 1 + 10 * 3 * 3
    row = dict(zip(lines[0].split(","), lines[1].split(",")))
    assert row["model"] == "mamba" and float(row["y"]) == page.run.data["y_mamba"][0]


def test_your_turn_is_one_token_of_the_selective_scan_and_names_the_mistakes(page):
    from sim import exercises as sim_exercises  # noqa: PLC0415
    from ui.exercises import GENERATORS, check  # noqa: PLC0415

    assert GENERATORS["state-space"] is sim_exercises.state_space
    box = page.exercise_box
    assert page.exercise == 0 and box.exercise == sim_exercises.state_space(0)
    assert "Your turn" in box.prompt.object and "selective scan" in box.prompt.object
    box.answer.value = box.exercise.answer_text  # Enter: checked at once
    assert box.verdict == "right" and "Right" in box.feedback.object
    for wrong, why in box.exercise.mistakes:  # every usual mistake is named in words
        feedback = check(box.exercise, ", ".join(str(x) for x in wrong))
        assert feedback.verdict == "mistake" and why.split(":")[0] in feedback.html
    names = " ".join(why for _, why in box.exercise.mistakes)
    assert "skip" in names and "exp(A)" in names and "without Δ" in names
    page.exercise = 1  # h_t: two numbers, typed as a vector
    h = box.exercise.answer
    assert len(h) == 2 and check(box.exercise, f"({h[0]}, {h[1]})").verdict == "right"
    assert "left out the decay" in check(box.exercise, ", ".join(
        str(x) for x in next(w for w, why in box.exercise.mistakes
                             if why.startswith("left out the decay")))).html


def test_your_turn_travels_in_the_link(page):
    run = page.run
    page.exercise = 7
    assert page.run is run  # the exercise changes no plot
    assert "ex=7" in to_query(page).split("&")
    fresh = StateSpacePage()
    assert apply_query(fresh, "ex=7") == [] and fresh.exercise == 7
    assert fresh.exercise_box.exercise.seed == 7
    assert html.escape(fresh.exercise_box.exercise.prompt) in fresh.exercise_box.prompt.object
