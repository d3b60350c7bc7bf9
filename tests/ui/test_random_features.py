"""The random-features page without a browser: every weight, error and estimate it shows is
sim.random_features', at every m."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sim
from sim import scenarios
from ui.pages.random_features import CHECK_ROWS, ELU, MEAN, N_SEEDS, THIS_SEED, RandomFeaturesPage


def text_at(readout) -> str:
    """The text a Readout shows now (without its invisible sizer)."""
    return readout.div.text.split("visibility:hidden")[0]


def query_keys(n=8, d=8):
    s = scenarios.gaussian(n, d, d, seed=0)
    return s.q[0], s.k


@pytest.fixture
def page(build) -> RandomFeaturesPage:
    return build(RandomFeaturesPage)


def test_t_doubles_m_and_the_bars_are_sims_weights(page):
    assert page.run.t_max == 9 and page.run.data["ms"].tolist() == [2**i for i in range(10)]
    q, K = query_keys()
    s = 1 / math.sqrt(8)
    bars = page.bars.source.data
    np.testing.assert_array_equal(bars["exact"], sim.softmax_weights_exact(q, K, scale=s))
    np.testing.assert_array_equal(bars["elu1"], sim.elu1_weights(q, K))
    for t in range(10):
        page.show(t)
        np.testing.assert_array_equal(page.bars.source.data["favor"],
                                      sim.softmax_weights_favor(q, K, 2**t, 0, scale=s))
        assert page.error.marker.location == 2**t
        assert f"<b>m = {2**t} feature" in text_at(page.caption)
    assert page.alt[page.bars.fig.id].startswith("Attention weights over 8 keys")


def test_error_curves_are_sims(page):
    page.param.update(keys=6, d=4, scale=1.5, orthogonal=False, seed=3, max_features="64")
    q, K = query_keys(6, 4)
    s = 1.5 / 2
    ms = 2 ** np.arange(7)
    err = sim.approximation_error(q, K, ms, np.arange(3, 3 + N_SEEDS), scale=s,
                                  orthogonal=False)
    curves = page.error.source.data
    np.testing.assert_array_equal(curves["x"], ms)
    np.testing.assert_array_equal(curves[MEAN], err.mean_abs)
    np.testing.assert_array_equal(curves[ELU],
                                  np.full(7, err.elu1_mean_abs))
    # this seed's curve: the bars' error, which is approximation_error's first seed
    mine = [np.abs(sim.softmax_weights_favor(q, K, int(m), 3, scale=s, orthogonal=False)
                   - err.exact).mean() for m in ms]
    np.testing.assert_allclose(curves[THIS_SEED], mine, rtol=0, atol=0)
    np.testing.assert_allclose(mine, err.per_seed_mean_abs[:, 0], rtol=1e-12)
    band = page.error.band.data
    np.testing.assert_array_equal(band["low"], np.percentile(err.per_seed_mean_abs, 10, axis=1))
    np.testing.assert_array_equal(band["high"], np.percentile(err.per_seed_mean_abs, 90, axis=1))
    page.show(6)
    caption = text_at(page.caption)
    assert f"{err.mean_abs[6]:.4g}" in caption and f"{err.elu1_mean_abs:.4g}" in caption


def test_more_features_get_closer_on_average(page):
    """Over 16 seeds the error falls as m grows: at 512 features it is at most a third of the
    error with 1, and below elu + 1's, where the stop says it first is."""
    mean = page.run.data["err_mean"]
    assert mean[-1] < mean[0] / 3
    stops = dict(page.named_stops())
    beats = stops["FAVOR+ beats elu + 1 (mean over seeds)"]
    assert mean[beats] < page.run.data["err_elu"][0] <= mean[beats - 1]
    assert stops["m ≥ d: one full orthogonal block"] == 3  # d = 8 = 2³
    assert stops["m = 1"] == 0


def test_unbiasedness_readout_is_sims_features(page):
    q, K = query_keys()
    s = 1 / math.sqrt(8)
    x = math.sqrt(s) * np.stack([q, K[7]])  # key 8: the steadiest for these keys
    page.show(3)  # m = 8
    html = text_at(page.unbiased_text)
    assert "For key 8, exp(s q·k) = <b>" + f"{math.exp(s * q @ K[7]):.4g}" in html
    one = np.dot(*sim.favor_features(x, sim.draw_projection(8, 8, 0)))  # the seed's own draw
    check = page.run.data["unbiased_text"]
    u = page.unbiased(q, K[7], s, page.run.data["ms"])[3]
    assert u["one"] == pytest.approx(one, rel=1e-12) and f"{u['one']:.4g}" in html
    W = sim.draw_projection(CHECK_ROWS, 8, 0)
    draws = [np.dot(*sim.favor_features(x, W[i:i + 8])) for i in range(0, CHECK_ROWS, 8)]
    assert u["draws"] == len(draws) == 4096
    assert u["mean"] == pytest.approx(np.mean(draws), rel=1e-12)
    assert u["spread"] == pytest.approx(np.std(draws, ddof=1), rel=1e-9)
    # unbiased: the mean of many draws is exp(s q·k) within three standard errors
    assert abs(u["mean"] - math.exp(s * q @ K[7])) < 3 * u["stderr"]
    assert "4,096 draws of 8" in check[3] and "64 draws of 512" in check[9]
    # one draw strays less as m grows
    spreads = [page.unbiased(q, K[7], s, np.array([m]))[0]["spread"] for m in (1, 64)]
    assert spreads[1] < spreads[0] / 4


def test_csv_has_one_row_per_m(page):
    lines = page.csv().strip().split("\n")
    header = lines[0].split(",")
    assert header[:3] == ["m", "error_this_seed", "error_mean_over_seeds"]
    assert header[-8:] == [f"w_favor_{j}" for j in range(1, 9)]
    assert len(lines) == 11 and lines[4].startswith("8,")


def test_your_turn_the_spread_at_m_features_and_why_positive_features(build):
    from sim import exercises as sim_exercises  # noqa: PLC0415
    from ui.exercises import GENERATORS, check  # noqa: PLC0415
    from ui.urlstate import apply_query, to_query  # noqa: PLC0415

    assert GENERATORS["random-features"] is sim_exercises.random_features
    page = build(RandomFeaturesPage)
    box = page.exercise_box
    assert box.exercise.given["variant"] == "spread" and not box.plots.visible
    g = box.exercise.given
    assert box.exercise.answer[0] == pytest.approx(g["sigma1"] / math.sqrt(g["m"]))
    assert check(box.exercise, box.exercise.answer_text).verdict == "right"
    wrong = check(box.exercise, sim_exercises.number_text(g["sigma1"] / g["m"])).html
    assert "Not quite" in wrong and "1/√m" in wrong  # divided by m: named
    page.exercise = 1  # odd seeds: why positive features
    g = box.exercise.given
    assert g["variant"] == "sign" and "cos and sin" in box.prompt.object
    est = np.array(g["estimates"])
    assert check(box.exercise, str(est[g["key"] - 1] / est.sum())).verdict == "right"
    assert "absolute values" in check(box.exercise, str(
        abs(est[g["key"] - 1]) / np.abs(est).sum())).html
    assert "positive features" in box.exercise.steps[-1]
    run = page.run
    page.exercise = 7
    assert page.run is run and "ex=7" in to_query(page).split("&")
    fresh = RandomFeaturesPage()
    assert apply_query(fresh, "ex=7") == [] and fresh.exercise_box.exercise.seed == 7
