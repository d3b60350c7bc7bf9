"""Property tests of the model loader: whatever a user pastes, `load_model` and
`parse_model_text` return a Model or raise a one-line ValueError, quickly, never anything else."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lanes import examples

from sim.cache import KINDS, Model, cache_report, load_model, parse_model_text

FIELDS = ["kind", "count", "label", "parallel", "kv_heads", "head_dim", "window", "latent_dim",
          "heads", "qk_head_dim", "v_head_dim", "state_shape", "conv_channels", "conv_kernel",
          "name", "layers", "source"]
MARKUP = ["<img src=x onerror=alert(7)>", "\x1b[31m", "\u202e", "\n", "\ud800", "</script>"]
SETTINGS = settings(max_examples=examples(150), deadline=1000,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Huge(int):
    """An int too long for repr (hypothesis prints examples): shown as 10**5000."""

    def __repr__(self) -> str:
        return "10**5000"


class Raw(str):
    """A JSON number literal written as is (e.g. 5,000 digits, which json.dumps cannot write)."""


def dumps(value: Any) -> str:
    """json.dumps, plus Raw literals and ints of any size."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool) or value is None or isinstance(value, (float, str)):
        return json.dumps(value)
    if isinstance(value, int):
        return json.dumps(value) if value.bit_length() < 10_000 else "9" * 5000
    if isinstance(value, list):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return "{" + ",".join(f"{json.dumps(k)}:{dumps(v)}" for k, v in value.items()) + "}"


sizes = st.one_of(
    st.integers(min_value=-3, max_value=5000),
    st.sampled_from([0, 1, 2**20, 2**20 + 1, 2**40, 2**53, 2**63, 2**64, 2**70, 10**30,
                     -(10**40), Huge(10**5000)]),
    st.integers(),
)
texts = st.one_of(st.text(max_size=20), st.sampled_from(MARKUP + list(KINDS)),
                  st.text(min_size=1, max_size=5).map(lambda s: s * 60))  # long names
scalars = st.one_of(st.none(), st.booleans(), sizes, texts,
                    st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([Raw("9" * 5000), Raw("1e999"), Raw("-" + "1" * 60)]))
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=5),
                               st.dictionaries(st.one_of(st.sampled_from(FIELDS), texts),
                                               children, max_size=6)),
    max_leaves=15)
entries = st.fixed_dictionaries(
    {"kind": st.one_of(st.sampled_from(KINDS), texts)},
    optional={key: st.one_of(sizes, sizes, scalars, json_values) for key in FIELDS[1:14]})
small = st.integers(min_value=1, max_value=64)
plausible = st.one_of(  # entries that load: the success path gets exercised too
    st.fixed_dictionaries({"kind": st.just("attention"), "kv_heads": small, "head_dim": small},
                          optional={"count": small, "window": small, "label": texts}),
    st.fixed_dictionaries({"kind": st.just("mla"), "latent_dim": small},
                          optional={"count": small, "parallel": st.booleans()}),
    st.fixed_dictionaries({"kind": st.just("recurrent"), "state_shape": st.lists(small, min_size=1,
                                                                                max_size=3)},
                          optional={"count": small}),
    st.fixed_dictionaries({"kind": st.just("mlp")}, optional={"count": small}))
entries = st.one_of(entries, plausible, plausible, st.fixed_dictionaries({
    "kind": st.just("recurrent"),
    "state_shape": st.lists(sizes, max_size=6),
    "count": sizes}, optional={"conv_channels": sizes, "conv_kernel": sizes,
                               "parallel": st.booleans()}))
models = st.one_of(
    st.fixed_dictionaries({"name": st.one_of(texts, json_values),
                           "layers": st.lists(entries, max_size=8)},
                          optional={"source": texts, "extra": json_values}),
    st.fixed_dictionaries({"name": st.sampled_from(MARKUP[:1] + ["m", "Jamba"]),
                           "layers": st.lists(plausible, min_size=1, max_size=6)}))


def _strip_raw(value: Any) -> Any:
    """The dict a program would pass to load_model (Raw literals become huge ints)."""
    if isinstance(value, Raw):
        return Huge(10**5000) if value.isdigit() else float("inf")
    if isinstance(value, list):
        return [_strip_raw(v) for v in value]
    if isinstance(value, dict):
        return {k: _strip_raw(v) for k, v in value.items()}
    return value


LOADED: list[int] = []


def _answer(call) -> Model | None:
    try:
        model = call()
    except ValueError as error:  # the only exception class allowed
        message = str(error)
        assert message and "\n" not in message and "\r" not in message, message
        assert "\x1b" not in message and "\u202e" not in message, message
        assert len(message) < 400, message
        return None
    assert isinstance(model, Model)
    LOADED.append(1)
    report = cache_report(model, 1000)  # a loaded model always reports (figures within 2^53)
    assert report["n_layers"] == model.n_layers and len(report["per_layer"]) == len(model.mixers)
    return model


@SETTINGS
@given(models)
def test_model_shaped_values(config: dict) -> None:
    from_text = _answer(lambda: parse_model_text(dumps(config)))
    from_dict = _answer(lambda: load_model(_strip_raw(config)))
    if from_text is not None:
        assert from_dict is not None and from_dict.mixers == from_text.mixers


@SETTINGS
@given(json_values)
def test_any_json_value(value: Any) -> None:
    _answer(lambda: parse_model_text(dumps(value)))
    _answer(lambda: load_model(_strip_raw(value)))


@SETTINGS
@given(models, st.sampled_from(FIELDS[:3]), json_values)
def test_repeated_keys_are_refused(config: dict, key: str, value: Any) -> None:
    text = dumps(config)
    repeated = text[:-1] + ("," if len(config) else "") + f'"{key}":{dumps(value)}' + "}"
    if key in config:
        try:
            parse_model_text(repeated)
        except ValueError as error:
            assert "\n" not in str(error)
        else:
            raise AssertionError("a repeated key was accepted")
    else:
        _answer(lambda: parse_model_text(repeated))


@SETTINGS
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200),
                 st.text(alphabet="[]{}\",:0123456789e-.\\ntrufalsNIiy ", max_size=400)))
def test_any_text(text: str | bytes) -> None:
    _answer(lambda: parse_model_text(text))


def test_the_properties_saw_models_load() -> None:
    """The model strategy reaches the success path: of the examples drawn here (200 in the slow
    lane, 50 in the gate; seeded, on its own: not after the other tests in file order), more than
    a tenth load."""
    loaded: list[int] = []
    n = examples(200)

    @settings(SETTINGS, max_examples=n, derandomize=True)
    @given(models)
    def draw(config: dict) -> None:
        if _answer(lambda: load_model(_strip_raw(config))) is not None:
            loaded.append(1)

    draw()
    assert len(loaded) > n // 10, (len(loaded), n)
