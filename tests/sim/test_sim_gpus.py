"""The search for the longest context and the most sequences that fit (sim/gpus.py): a guess
makes it shorter, never different. Checked against the plain answer, every x tried in order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lanes import examples

from sim import gpus
from sim.cache import PRESETS
from sim.engines import ENGINES


def brute(fits, low: int, high: int):
    best = None
    for x in range(low, high + 1):
        if fits(x):
            best = x
        else:
            break
    return best


@settings(max_examples=examples(400), deadline=None)
@given(low=st.integers(0, 5), span=st.integers(0, 300), cut=st.integers(-2, 320),
       guess=st.one_of(st.none(), st.integers(-10, 400)))
def test_a_guess_never_changes_the_answer(low, span, cut, guess):
    high = low + span
    calls = []

    def fits(x):
        assert low <= x <= high, (x, low, high)  # never asked outside the range
        calls.append(x)
        return x <= cut

    assert gpus._largest(fits, low, high, guess) == brute(lambda x: x <= cut, low, high)


def test_a_near_guess_takes_a_handful_of_calls_where_halving_takes_41():
    high = gpus.MAX_TOKENS
    for answer in (1, 777, 131_071, 4_000_000, high - 1):
        for guess, most in ((None, 42), (answer, 4), (answer + 3, 6), (answer - 9, 12)):
            if guess is not None and guess <= 0:
                continue  # no guess inside the range: the plain search
            calls = []

            def fits(x, answer=answer, calls=calls):
                calls.append(x)
                return x <= answer

            assert gpus._largest(fits, 0, high, guess) == answer
            assert len(calls) <= most, (answer, guess, len(calls))


def test_the_verdicts_equal_a_search_without_a_guess():
    """Each preset on an H100 and a small card, under each engine: the longest context and the
    most sequences are what halving the whole range finds (the search before the guess)."""
    plain = gpus._largest

    def unguessed(fits, low, high, guess=None):
        return plain(fits, low, high)

    for name, model in PRESETS.items():
        for engine in ENGINES:
            for memory_gib in (80, 12):
                args = dict(memory_gib=memory_gib, weight_bytes=2 * 2**30)
                got = gpus.gpu_verdicts(model, [4096, 131072], 1, engine, **args)
                gpus._largest = unguessed
                try:
                    want = gpus.gpu_verdicts(model, [4096, 131072], 1, engine, **args)
                finally:
                    gpus._largest = plain
                assert [(v["max_tokens"], v["max_sequences"]) for v in got] == \
                       [(v["max_tokens"], v["max_sequences"]) for v in want], (name, engine, memory_gib)
