"""Cached and uncached decoding agree; beam search behaves as specified."""

import numpy as np
import keras
import pytest

import mintransformer as mt

START, END = 1, 2


@pytest.fixture(scope="module", params=[False, True], ids=["post-norm", "pre-norm"])
def model(request):
    keras.utils.set_random_seed(0)
    m = mt.MinTransformer(2, 16, 4, 32, 23, 23, 40, dropout=0.1, norm_first=request.param)
    m((np.ones((1, 3), "int32"), np.ones((1, 2), "int32")))
    return m


@pytest.fixture(scope="module")
def source():
    tokens = np.random.RandomState(1).randint(3, 23, size=(4, 7)).astype("int32")
    tokens[1, 4:] = 0  # padding
    tokens[3, 2:] = 0
    return tokens


def test_decode_step_equals_full_forward_pass(model, source):
    target = np.random.RandomState(2).randint(3, 23, size=(4, 6)).astype("int32")
    target[:, 0] = START
    full = model((source, target), training=False).numpy()  # (B, T, V)
    caches = model.start_cache(source, max_length=10)
    for t in range(target.shape[1]):
        logits, caches = model.decode_step(target[:, t:t + 1], t, caches, source)
        np.testing.assert_allclose(logits.numpy(), full[:, t], atol=1e-4)


def test_cached_and_uncached_greedy_return_identical_tokens(model, source):
    cached = mt.greedy_decode(model, source, START, END, max_length=12, use_cache=True)
    uncached = mt.greedy_decode(model, source, START, END, max_length=12, use_cache=False)
    assert cached.shape == (4, 12) and cached.dtype == np.int32
    np.testing.assert_array_equal(cached, uncached)


def test_greedy_picks_the_argmax_of_the_full_model(model, source):
    out = mt.greedy_decode(model, source, START, END, max_length=5, use_cache=False)
    prefix = np.full((4, 1), START, "int32")
    for t in range(5):
        logits = model((source, prefix), training=False).numpy()[:, -1]
        logits[:, [0, START]] = -np.inf  # pad and start are never generated
        expected = logits.argmax(-1)
        live = ~np.any(out[:, :t] == END, axis=1)
        np.testing.assert_array_equal(out[live, t], expected[live])
        prefix = np.concatenate([prefix, out[:, t:t + 1]], axis=1)


def test_greedy_pads_after_end_and_never_emits_pad_or_start(model, source):
    out = mt.greedy_decode(model, source, START, END, max_length=12)
    for row in out:
        ends = np.flatnonzero(row == END)
        live = row if not len(ends) else row[: ends[0] + 1]
        assert not np.isin(live, [0, START]).any()
        if len(ends):
            assert (row[ends[0] + 1:] == 0).all()


def test_beam_size_one_is_greedy(model, source):
    greedy = mt.greedy_decode(model, source, START, END, max_length=10)
    np.testing.assert_array_equal(mt.beam_search(model, source, START, END, 10, beam_size=1), greedy)


def test_beam_search_cached_equals_uncached_and_scores_at_least_greedy(model, source):
    cached = mt.beam_search(model, source, START, END, 8, beam_size=4, alpha=0.6)
    uncached = mt.beam_search(model, source, START, END, 8, beam_size=4, alpha=0.6, use_cache=False)
    np.testing.assert_array_equal(cached, uncached)
    greedy = mt.greedy_decode(model, source, START, END, 8)

    def score(tokens):  # length-normalised log-probability under the model
        prefix = np.concatenate([np.full((4, 1), START, "int32"), tokens], axis=1)
        logits = model((source, prefix[:, :-1]), training=False).numpy()
        logits[..., [0, START]] = -np.inf
        logp = logits - logits.max(-1, keepdims=True)
        logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
        scores = []
        for b in range(4):
            ends = np.flatnonzero(tokens[b] == END)
            n = ends[0] + 1 if len(ends) else tokens.shape[1]
            total = sum(logp[b, t, tokens[b, t]] for t in range(n))
            scores.append(total / mt.length_penalty(n, 0.6))
        return np.array(scores)

    assert np.all(score(cached) >= score(greedy) - 1e-6)


def test_length_penalty_matches_wu_et_al():
    assert mt.length_penalty(1, 0.6) == pytest.approx(1.0)
    assert mt.length_penalty(10, 0.6) == pytest.approx(((5 + 10) / 6) ** 0.6)
    assert mt.length_penalty(10, 0.0) == 1.0


def test_decoding_rejects_a_max_length_beyond_the_model(model, source):
    with pytest.raises(ValueError, match="max_length=41.*max_length=40"):
        mt.greedy_decode(model, source, START, END, max_length=41)
