"""Hybrid's dtype settings show only while a model on the page holds what they size (issue 20,
"No dead ends"): the state dtype while model A or B has a fixed state, the KV cache dtype while
one has an attention layer. Llama-3-8B against Llama-3-8B once showed "State dtype (the ideal)"
and Mamba-2 alone the KV cache dtype: moving them changed only the dtype's name in the engine's
lines. Guarded here: hidden then, shown again with a model that holds one, a link still sets a
hidden one (its key stays in the link contract), and a hidden one changes no byte shown.
"""

from __future__ import annotations

import pytest
from helpers import picture, same

from ui import urlstate
from ui.pages.hybrid import HybridPage


def boxes(page) -> dict[str, bool]:
    return {name: box.visible for name, box in page.dtype_boxes.items()}


@pytest.mark.parametrize("a, b, kv, state", [
    ("jamba-v0.1", "llama-3-8b", True, True),
    ("llama-3-8b", "llama-3-8b", True, False),
    ("llama-3-8b", "none", True, False),
    ("mamba-2-2.7b", "none", False, True),
    ("mamba-2-2.7b", "llama-3-8b", True, True),
])
def test_a_dtype_shows_only_with_a_model_that_holds_it(build, a, b, kv, state):
    page = build(HybridPage, model_a=a, model_b=b)
    assert boxes(page) == {"kv_dtype": kv, "state_dtype": state}


def test_changing_the_models_hides_and_shows_the_state_dtype(build):
    page = build(HybridPage)
    page.model_a = "llama-3-8b"  # model B is Llama-3-8B too: no fixed state on the page
    assert boxes(page) == {"kv_dtype": True, "state_dtype": False}
    page.model_b = "mamba-2-2.7b"
    assert boxes(page) == {"kv_dtype": True, "state_dtype": True}
    page.model_b = "none"
    assert boxes(page)["state_dtype"] is False


def test_a_link_sets_a_hidden_dtype(build):
    page = build(HybridPage)
    assert "state_dtype" in urlstate.link_contract(page)["settings"]
    notices = urlstate.apply_query(page, "model_a=llama-3-8b&model_b=llama-3-8b&state_dtype=bf16")
    assert notices == [] and page.state_dtype == "bf16" and not page.notice
    assert boxes(page)["state_dtype"] is False
    assert "state_dtype=bf16" in urlstate.to_query(page)  # Share keeps it


@pytest.mark.parametrize("a, name, value", [("llama-3-8b", "state_dtype", "bf16"),
                                            ("mamba-2-2.7b", "kv_dtype", "fp32")])
@pytest.mark.parametrize("engine", ["vllm", "sglang", "ideal"])
def test_a_hidden_dtype_changes_no_byte(build, a, name, value, engine):
    page = build(HybridPage, model_a=a, model_b="none", engine=engine)
    assert not boxes(page)[name]
    page.show(3)

    def numbers() -> dict:  # everything drawn but the texts (which name the dtype)
        shown = picture(page)
        frames = shown.pop("frames")
        return shown | {k: v for k, v in frames.items() if not k.endswith(":text")}

    before = numbers()
    setattr(page, name, value)
    assert getattr(page, name) == value and not page.notice
    assert same(numbers(), before)
