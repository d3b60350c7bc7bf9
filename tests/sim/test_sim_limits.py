"""Limits on what a user can type: every size bounded before any work, one-line messages that
name the JSON path, exact integer figures up to 2^53, work proportional to entries."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from sim import cache
from sim.cache import (
    MAX_BYTES,
    MAX_MIXERS,
    PRESETS,
    cache_report,
    kv_cache_bytes,
    load_model,
    memory_curve,
    parse_model_text,
    state_bytes,
)
from sim.user_input import MAX_TEXT_BYTES, describe_value, quote

MARKUP = "<img src=x onerror=alert(7)>"


def _one_line(message: str) -> str:
    assert "\n" not in message and "\r" not in message and "\x1b" not in message
    assert len(message) < 400, message
    return message


def _model(*layers: dict) -> dict:
    return {"name": "x", "layers": list(layers)}


def _refused(config, pattern: str) -> str:
    with pytest.raises(ValueError, match=pattern) as info:
        load_model(config)
    return _one_line(str(info.value))


# --- sizes: bounded before any work ------------------------------------------------------------

def _calls(call) -> int:
    """Python and C function calls made while `call()` runs (a ValueError is expected or not):
    a count of the work done, the same on any machine, unlike a timing."""
    count = 0

    def profile(_frame, event, _arg) -> None:
        nonlocal count
        count += event in ("call", "c_call")

    sys.setprofile(profile)
    try:
        call()
    except ValueError:
        pass
    finally:
        sys.setprofile(None)
    return count


def test_count_1e30_answers_at_once_naming_the_entry() -> None:
    def config(count: int) -> dict:
        return _model({"kind": "mlp"}, {"kind": "mlp"},
                      {"kind": "attention", "count": count, "kv_heads": 8, "head_dim": 128})

    message = _refused(config(10**30), r"^layers\[2\]\.count: 1000000000000000000000000000000 "
                                       r"is too large")
    assert "accepted: 1 to 4,096" in message
    # refused before any work that grows with the count: no more calls than loading count 1
    # (a loaded model does its figures too), where a per-layer expansion would make 10^30;
    # and loading 4,096 layers costs about what one does
    # (each counted after one warm-up call: first calls compile and cache things once)
    refused, loaded_1, loaded_4096 = (
        min(_calls(lambda c=c: load_model(config(c))) for _ in range(2)) for c in (10**30, 1, 4096))
    assert refused <= loaded_1 and loaded_4096 < 2 * loaded_1  # 4,096 layers: no more calls
    with pytest.raises(ValueError, match=r"^layers\[2\]\.count"):
        parse_model_text(json.dumps(config(10**30)))


def test_counts_adding_up_past_the_limit_name_the_entry() -> None:
    config = _model(*[{"kind": "mlp", "count": 4000}] * 2)
    _refused(config, r"^layers\[1\]\.count: with this entry the model has 8,000 layers")
    assert load_model(_model({"kind": "mlp", "count": MAX_MIXERS})).n_layers == MAX_MIXERS


def test_head_dim_2_70_is_refused_with_path_value_and_range() -> None:
    message = _refused(_model({"kind": "attention", "kv_heads": 1, "head_dim": 2**70}),
                       r"^layers\[0\]\.head_dim: 1180591620717411303424 is too large")
    assert message.endswith("accepted: 1 to 1,048,576")


def test_head_dim_2_40_no_longer_wraps_in_memory_curve() -> None:
    # before: accepted, and memory_curve's int64 products wrapped to negative points
    with pytest.raises(ValueError, match=r"^layers\[0\]\.head_dim: 1099511627776 is too large"):
        memory_curve(_model({"kind": "attention", "kv_heads": 1, "head_dim": 2**40}),
                     np.array([1, 2**20]))


@pytest.mark.parametrize("field, value, path", [
    ("kv_heads", 2**21, r"layers\[0\]\.kv_heads"),
    ("window", 2**41, r"layers\[0\]\.window"),
    ("head_dim", 10**5000, r"layers\[0\]\.head_dim"),
], ids=["kv_heads", "window", "head_dim_5000_digits"])
def test_every_attention_size_is_bounded(field: str, value: int, path: str) -> None:
    entry = {"kind": "attention", "kv_heads": 1, "head_dim": 8, field: value}
    message = _refused(_model(entry), rf"^{path}: .* is too large; accepted: 1 to ")
    if value == 10**5000:
        assert "an integer of about 5,001 digits" in message


def test_state_shape_conv_and_mla_sizes_are_bounded() -> None:
    _refused(_model({"kind": "recurrent", "state_shape": [4, 2**30]}),
             r"^layers\[0\]\.state_shape\[1\]: 1073741824 is too large")
    _refused(_model({"kind": "recurrent", "state_shape": [2] * 5}),
             r"^layers\[0\]\.state_shape: expected a list of 1 to 4")
    _refused(_model({"kind": "recurrent", "state_shape": [4], "conv_channels": 8,
                     "conv_kernel": 2**25}), r"^layers\[0\]\.conv_kernel: 33554432 is too large")
    _refused(_model({"kind": "mla", "latent_dim": 576, "heads": 2**21, "qk_head_dim": 1,
                     "v_head_dim": 1}), r"^layers\[0\]\.heads: 2097152 is too large")


def test_model_whose_figures_pass_2_53_is_refused_when_loaded() -> None:
    big = {"kind": "attention", "kv_heads": 2**20, "head_dim": 2**20}
    _refused(_model({**big, "count": 1100}),
             r"^layers\[0\]: with this entry the model's KV cache per token reaches")
    _refused(_model({"kind": "recurrent", "state_shape": [2**20, 2**20, 2**20]}),
             r"^layers\[0\]: with this entry the model's fixed state reaches")


def test_figures_are_exact_ints_up_to_2_53_and_refused_beyond() -> None:
    # 2 · 2^10 · 2^20 · 2 bytes = 2^32 per token; 2^21 tokens make exactly 2^53
    model = load_model(_model({"kind": "attention", "kv_heads": 2**10, "head_dim": 2**20}))
    assert kv_cache_bytes(model, 2**21) == MAX_BYTES
    assert type(kv_cache_bytes(model, 2**21)) is int
    curve = memory_curve(model, np.array([0, 2**20, 2**21]))
    assert curve["total_bytes"].tolist() == [0, 2**52, 2**53]
    with pytest.raises(ValueError, match=r"^tokens, batch: the KV cache would take "
                                         r"9,007,203,549,708,288 bytes, above the 2\^53"):
        kv_cache_bytes(model, 2**21 + 1)
    with pytest.raises(ValueError, match=r"^tokens, batch: the KV cache would take"):
        memory_curve(model, np.array([1, 2**21 + 1]))  # before: int64 points past 2^53
    with pytest.raises(ValueError, match=r"^tokens, batch"):
        cache_report(model, 2**20, batch=4)


def test_tokens_and_batch_are_bounded_before_any_arithmetic() -> None:
    # before: OverflowError from numpy (window) or a 10^30-token figure
    with pytest.raises(ValueError, match=r"^tokens: 1000000000000000000000000000000 is too large; "
                                         r"accepted: 0 to 1,099,511,627,776"):
        cache_report("recurrentgemma-2b", 10**30)
    with pytest.raises(ValueError, match=r"^batch: 1099511627776 is too large"):
        state_bytes("mamba-2-2.7b", batch=2**40)
    with pytest.raises(ValueError, match=r"^tokens: expected an integer from 0 to"):
        memory_curve("llama-3-8b", np.array([1, 2**63 - 1], dtype=np.uint64) + np.uint64(2**63))
    with pytest.raises(ValueError, match=r"^tokens: expected an integer from 0"):
        memory_curve("llama-3-8b", [1, 10**30])  # an object array
    with pytest.raises(ValueError, match=r"^tokens: expected an integer from 0"):
        cache_report("llama-3-8b", np.array([1, 2]))


def test_work_follows_entries_not_count() -> None:
    config = _model({"kind": "attention", "kv_heads": 8, "head_dim": 128, "count": 4000},
                    {"kind": "recurrent", "state_shape": [8, 64, 64], "count": 96})
    model = load_model(config)
    assert len(model.groups) == 2 and "mixers" not in vars(model)  # nothing listed per layer
    assert kv_cache_bytes(model, 1000) == 4000 * 2 * 8 * 128 * 2 * 1000
    assert "mixers" not in vars(model)
    report = cache_report(model, 1000)
    assert [(row["count"], row["first_layer"]) for row in report["per_entry"]] == [(4000, 0),
                                                                                  (96, 4000)]
    assert len(report["per_layer"]) == 4096  # the per-layer rows the UI zips with mixers


def _plain_figures(model: cache.Model, tokens: int, batch: int) -> tuple[list, int, int | None]:
    """The old way, layer by layer from model.mixers: the reference for the grouped figures."""
    rows, full = [], 0
    shape = next((m for m in model.mixers if m.kind in ("attention", "mla")), None)
    for m in model.mixers:
        held = tokens if m.window is None else min(tokens, m.window)
        rows.append({"layer": m.layer, "kind": m.kind, "label": m.label,
                     "kv_bytes": m.kv_bytes_per_token(2) * held * batch,
                     "state_bytes": m.state_numbers() * 4 * batch})
    for group in model.layers():
        if shape is not None and any(m.kind != "mlp" for m in group):
            full += shape.kv_bytes_per_token(2) * tokens * batch
    return rows, sum(r["kv_bytes"] for r in rows), None if shape is None else full


def test_grouped_figures_equal_the_plain_per_layer_sum() -> None:
    rng = np.random.default_rng(5)
    kinds = [{"kind": "attention", "kv_heads": 2, "head_dim": 64},
             {"kind": "attention", "kv_heads": 1, "head_dim": 32, "window": 100},
             {"kind": "mla", "latent_dim": 96}, {"kind": "mlp"},
             {"kind": "recurrent", "state_shape": [4, 8], "conv_channels": 16, "conv_kernel": 4}]
    models = list(PRESETS.values())
    for _ in range(60):
        entries, layers = [], 0
        for _ in range(rng.integers(1, 8)):
            entry = dict(kinds[rng.integers(len(kinds))], count=int(rng.integers(1, 6)))
            if layers and rng.random() < 0.3:
                entry.update(parallel=True, count=int(rng.integers(1, layers + 1)))
            else:
                layers += entry["count"]
            entries.append(entry)
        models.append(load_model({"name": "random", "layers": entries}))
    for model in models:
        for tokens in (0, 7, 150):
            report = cache_report(model, tokens, batch=3)
            rows, kv, full = _plain_figures(model, tokens, 3)
            assert report["per_layer"] == rows
            assert report["kv_cache_bytes"] == kv
            assert report["full_attention_kv_bytes"] == full


# --- parse_model_text: the JSON box ------------------------------------------------------------

def test_nesting_100000_deep_is_a_clear_error() -> None:
    with pytest.raises(ValueError) as info:  # before: RecursionError
        parse_model_text("[" * 100_000 + "]" * 100_000)
    assert _one_line(str(info.value)).startswith("config: the text is longer than 65,536 bytes")
    for text in ("[" * 30_000 + "]" * 30_000, '{"a":' * 10_000 + "1" + "}" * 10_000):
        with pytest.raises(ValueError, match=r"^config: nested more than 32 levels deep"):
            parse_model_text(text)  # within the size limit: before, RecursionError too


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    name = "[" * 50 + '\\"{' * 10
    model = parse_model_text('{"name": "' + name + '", "layers": [{"kind": "mlp"}]}')
    assert model.name.startswith("[[[")


def test_5000_digit_number_is_never_converted() -> None:
    text = '{"name": "x", "layers": [{"kind": "mlp", "count": ' + "9" * 5000 + "}]}"
    with pytest.raises(ValueError) as info:
        parse_model_text(text)  # before: Python's own int-conversion limit message
    message = _one_line(str(info.value))
    assert message.startswith("layers[0].count: a number written with 5,000 characters")
    assert message.endswith("accepted: 1 to 4,096")


def test_text_size_is_limited_before_parsing() -> None:
    text = '{"name": "x", "layers": [{"kind": "mlp"}], "source": "' + "a" * MAX_TEXT_BYTES + '"}'
    with pytest.raises(ValueError, match=r"^config: the text is longer than 65,536 bytes"):
        parse_model_text(text)
    with pytest.raises(ValueError, match=r"^config: 65,537 bytes is too long"):
        parse_model_text(b" " * (MAX_TEXT_BYTES + 1))
    with pytest.raises(ValueError, match=r"^config: not UTF-8 text \(byte 9 cannot be decoded\)"):
        parse_model_text(b'{"name": \xff}')


@pytest.mark.parametrize("text, pattern", [
    ('{"name": NaN, "layers": []}', r"^name: expected a non-empty string, got NaN \(not a finite"),
    ('{"name": "x", "layers": [{"kind": "mlp", "count": -Infinity}]}',
     r"^layers\[0\]\.count: -Infinity \(not a finite number\) is out of range; accepted: 1 to 4,096"),
    ('{"name": "x", "layers": [{"kind": "mlp", "count": 1e999}]}',
     r"^layers\[0\]\.count: 1e999 \(beyond float64's range\) is out of range"),
    ('{"name": "x", "layers": [{"kind": "mlp", "count": 2.0}]}',
     r"^layers\[0\]\.count: expected a positive integer, got 2.0"),
    ('{"name": "x", "name": "y", "layers": []}', r"^config: the field 'name' appears twice"),
    ('{"name": "x", "layers": [{"kind": "mlp", "kind": "mlp"}]}', r"appears twice"),
    ('{"name": "x", "layers": [{"kind": "mlp"}], "colour": 1}', r"^colour: unknown field"),
    ('{"name": "x", "layers": [{"kind": "attention", "kv_heads": 1, "head_dim": 2, "ring": 1}]}',
     r"^layers\[0\]\.ring: unknown field for kind 'attention'"),
    ('{"name": "x", "layers": [{"kind": "mamba"}]}', r"^layers\[0\]\.kind: unknown kind 'mamba'"),
    ('{"name": "\\ud800", "layers": [{"kind": "mlp"}]}', r"^name: not valid Unicode text"),
    ('{"name": "x", "layers": [{"kind": "mlp"}]', r"^config: not valid JSON \(Expecting"),
])
def test_bad_text_is_one_line_naming_the_field(text: str, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern) as info:
        parse_model_text(text)
    _one_line(str(info.value))


def test_markup_and_control_characters_are_quoted_short_and_stripped() -> None:
    kind = MARKUP + "\x1b[31m" + "x" * 500
    message = _refused(_model({"kind": kind}), r"^layers\[0\]\.kind: unknown kind '<img src=x ")
    assert "x" * 50 not in message and "…'" in message and "\x1b" not in message
    message = _refused(_model({"kind": "mlp", MARKUP + "\n\x07": 1}),
                       r"^layers\[0\]\['<img src=x onerror=alert\(7\)>'\]: unknown field")
    _refused({"name": "x" * 201, "layers": [{"kind": "mlp"}]},
             r"^name: 201 characters is too long; accepted: at most 200")
    # a markup name is a fine name: the UI escapes it when it shows it
    assert load_model({"name": MARKUP, "layers": [{"kind": "mlp", "label": MARKUP}]}).name == MARKUP


def test_quote_and_describe_never_expand() -> None:
    assert quote("a\x1b[2Jb\u202e") == "'a[2Jb'"
    assert describe_value(10**5000) == "an integer of about 5,001 digits"
    assert describe_value([[[]]] * 10**6) == "a list of 1,000,000 items"
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    _refused({"name": "x", "layers": [deep]}, r"^layers\[0\]: expected an object with a 'kind', "
                                              r"got a list of 1 items")
    _refused({"name": "x", "layers": [{"kind": "recurrent", "state_shape": deep}]},
             r"^layers\[0\]\.state_shape\[0\]: expected a positive integer, got a list")
    with pytest.raises(ValueError, match=r"^model: unknown value 'gpt-xxxx"):
        kv_cache_bytes("gpt-" + "x" * 10**6, 1)
