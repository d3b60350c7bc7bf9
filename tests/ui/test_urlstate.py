"""Links that reproduce a view: PageState <-> query string, on a small state of every kind."""

from __future__ import annotations

import param

from ui.state import PageState
from ui.urlstate import apply_query, to_query, url_params


class Knobs(PageState):
    d = param.Integer(4, bounds=(2, 16))
    beta = param.Number(0.5, bounds=(0.0, 2.0))
    normalize = param.Boolean(True)
    rule = param.Selector(default="linear", objects=["linear", "deltanet"])
    rules = param.ListSelector(default=["linear", "retnet"], objects=["linear", "retnet", "gla"])
    custom = param.Dict(default={"name": "m", "layers": [{"kind": "mlp"}]})

    def __init__(self, **params):
        super().__init__(**params)
        self.set_t_max(2 * self.d)
        self.param.watch(lambda e: self.set_t_max(2 * e.new), "d")


def test_every_knob_and_t_travel_with_t_last():
    s = Knobs()
    names = url_params(s)
    assert names[-1] == "t"
    assert {"d", "beta", "normalize", "rule", "rules", "custom", "seed", "speed"} <= set(names)
    assert not {"t_max", "playing", "notice", "name"} & set(names)


def test_round_trip_reproduces_every_value():
    s = Knobs(d=12, beta=1.25, normalize=False, rule="deltanet", rules=["gla", "linear"],
              custom={"name": "x ü", "layers": [{"kind": "attention", "count": 3}]}, seed=42)
    s.jump(20)  # needs d = 12 first: t_max is 24
    query = to_query(s, {"embed": True, "present": False})
    assert "embed=1" in query and "present" not in query
    fresh = Knobs()
    notices, flags = apply_query(fresh, query)
    assert notices == []
    assert flags == {"embed": True, "present": False}
    for name in url_params(s):
        assert getattr(fresh, name) == getattr(s, name), name


def test_bad_values_are_named_and_skipped_the_rest_applies():
    s = Knobs()
    notices, _ = apply_query(s, "?d=99&beta=abc&rule=softmax&normalize=maybe&custom=!!&bogus=1&t=3&seed=7")
    text = " ".join(notices)
    assert "d=99" in text and "2 to 16" in text
    assert "beta=abc" in text and "rule=softmax" in text and "linear, deltanet" in text
    assert "normalize=maybe" in text and "custom=" in text and "bogus" in text
    assert (s.d, s.beta, s.rule, s.normalize, s.seed, s.t) == (4, 0.5, "linear", True, 7, 3)


def test_t_out_of_range_is_refused_with_the_range():
    s = Knobs()
    notices, _ = apply_query(s, "t=100")
    assert s.t == 0 and "0 to 8" in notices[0]


def test_theme_never_travels_and_is_ignored():
    s = Knobs()
    notices, flags = apply_query(s, "theme=dark&present=1")
    assert notices == [] and flags["present"] is True
    assert "theme" not in to_query(s)


def test_state_stepping_and_bounds():
    s = Knobs()
    for _ in range(20):
        s.step()
    assert s.t == s.t_max == 8 and not s.playing
    s.back()
    assert s.t == 7
    s.toggle_play()
    assert s.playing
    s.reset()
    assert (s.t, s.playing) == (0, False)
    s.jump(5)
    s.d = 2  # t_max shrinks to 4: t follows
    assert s.t == 4
