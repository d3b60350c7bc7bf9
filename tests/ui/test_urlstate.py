"""Links that reproduce a view: a page's settings <-> its query string, on a small page with a
setting of every kind, and property tests over the parser."""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from hypothesis import given, settings
from hypothesis import strategies as st
from lanes import examples

from ui.page import Page, Run
from ui.urlstate import SHELL_KEYS, apply_query, link_contract, to_query


class Knobs(Page):
    d = param.Integer(4, bounds=(2, 16), label="Size d")
    beta = param.Number(0.5, bounds=(0.0, 2.0), label="Write strength β")
    normalize = param.Boolean(True, label="Normalise")
    rule = param.Selector(default="linear", objects=["linear", "deltanet"], label="Rule")
    rules = param.ListSelector(default=["linear", "retnet"], objects=["linear", "retnet", "gla"],
                               label="Rules")
    link_keys = {"beta": "b"}

    def compute(self) -> Run:
        if self.beta > 1.5 and self.rule == "deltanet":
            raise ValueError("β above 1.5 diverges here")
        return Run(t_max=2 * self.d, data={})

    def make_views(self):
        return []

    def body(self):
        return pn.Column()


def test_every_setting_travels_under_its_key():
    q = to_query(Knobs(d=5, beta=0.25, normalize=False, rules=["gla", "linear"]))
    assert q == "d=5&b=0.25&normalize=0&rule=linear&rules=gla,linear"
    fresh = Knobs()
    assert apply_query(fresh, q) == []
    assert (fresh.d, fresh.beta, fresh.normalize, fresh.rules) == (5, 0.25, False, ["gla", "linear"])
    assert fresh.run.t_max == 10


def test_bad_values_are_named_with_what_is_accepted():
    k = Knobs()
    notices = apply_query(k, "d=99&b=abc&normalize=maybe&rule=softmax&rules=gla,gla&zzz=1&d=3")
    text = " ".join(notices)
    assert "gives d 2 times; the last one counts" in text and k.d == 3
    assert "Ignored b=abc: expected a number from 0.0 to 2.0." in notices
    assert "Ignored normalize=maybe: expected 1 or 0." in notices
    assert "Ignored rule=softmax: expected one of linear, deltanet." in notices
    assert any(n.startswith("Ignored rules=gla,gla: expected a comma-separated list of different") for n in notices)
    assert "Ignored an unknown setting “zzz”." in notices


def test_settings_that_cannot_run_together_are_named_one_by_one():
    k = Knobs()
    notices = apply_query(k, "rule=deltanet&b=1.8")
    # applied in the page's order of settings (β before the rule), whatever the link's order
    assert k.beta == 1.8 and k.rule == "linear"
    assert len(notices) == 1 and "Rule = deltanet" in notices[0] and "diverges" in notices[0]
    assert apply_query(Knobs(), "b=1.8&rule=deltanet") == notices


def test_enormous_and_markup_values_are_shortened_plain_text():
    k = Knobs()
    notices = apply_query(k, "d=" + "9" * 100_000)
    assert len(notices) == 1 and len(notices[0]) < 200
    notices = apply_query(k, "%3Cscript%3Ealert(1)%3C%2Fscript%3E=1&rule=%3Cimg%20src%3Dx%3E")
    assert "“<script>alert(1)</script>”" in notices[0]  # shown as text by the shell
    assert all("\n" not in n for n in notices)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["d", "b", "normalize", "rule", "rules", "t", "x", ""]),
                          st.text(max_size=40)), max_size=6))
def test_any_link_gives_a_valid_page_and_one_line_notices(pairs):
    from urllib.parse import urlencode  # noqa: PLC0415

    k = Knobs()
    notices = apply_query(k, urlencode(pairs))
    assert all(isinstance(n, str) and "\n" not in n for n in notices)
    assert 2 <= k.d <= 16 and 0 <= k.beta <= 2 and k.run.t_max == 2 * k.d
    assert np.isfinite(k.beta)


# ---- the link contract and bounded notices -----------------------------------------------------

def test_a_hostile_link_gets_a_short_grouped_notice():
    """A 100 kB link of one unknown key 9,000 times, and 9,000 different unknown keys: one
    sentence each, naming at most three keys (the shell got 432,889 characters before)."""
    page = Knobs()
    repeated = "&".join(["zz=1"] * 9_000)
    notices = apply_query(page, repeated)
    assert notices == ["Ignored an unknown setting “zz”."]
    many = "&".join(f"k{i}=1" for i in range(9_000))
    notices = apply_query(page, many)
    assert notices == ["Ignored 9,000 unknown settings: “k0”, “k1”, “k2” and 8,997 more."]
    # a setting given 9,000 times: one sentence with the count, the last value applies
    notices = apply_query(page, "&".join(f"d={2 + i % 10}" for i in range(9_000)))
    assert notices == ["The link gives d 9,000 times; the last one counts."] and page.d == 11


def test_notices_are_bounded_and_counted():
    page = Knobs()
    query = "d=99&b=x&normalize=maybe&rule=nope&rules=a,a&zz=1&d=98"
    notices = apply_query(page, query)
    assert len(notices) == 6 and notices[-1].startswith("… and ") and notices[-1].endswith("more notices of this link.")
    assert sum(len(n) for n in notices) < 600


def test_invisible_characters_are_shown_as_escapes():
    """"d=8" followed by a zero-width space is not 8: the notice quotes what was given."""
    page = Knobs()
    notices = apply_query(page, "d=8%E2%80%8B")
    assert notices == ["Ignored d=8\\u200b: expected a whole number from 2 to 16."] and page.d == 4


def test_the_shell_keys_are_left_to_the_shell():
    page = Knobs()
    query = "&".join(f"{k}=x" for k in SHELL_KEYS)
    assert apply_query(page, query) == [] and page.d == 4


def test_the_link_contract_is_what_the_shell_reads():
    """Stated once here; build.py writes it into each page; the shell (assets/js/config.js) reads nothing else."""
    page = Knobs()
    contract = link_contract(page)
    assert contract["shell"] is SHELL_KEYS
    assert set(SHELL_KEYS) == {"t", "embed", "present", "theme", "view", "speed"}
    assert contract["settings"] == sorted(["d", "b", "normalize", "rule", "rules"])
    assert contract["defaults"] == to_query(page)
    assert contract["views"] == []
    for key, spec in SHELL_KEYS.items():
        assert spec["accepts"] in {"flag", "choice", "int", "number", "view"}, key
        assert spec["doc"] and "example" in spec, key
