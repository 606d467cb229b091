"""Cached and uncached decoding agree; beam search behaves as specified."""

import numpy as np
import keras
import pytest

import mintransformer as mt
from mintransformer.decoding import _log_probs  # the decoders' log-softmax, pad and start banned

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
    encoded_once = mt.greedy_decode(model, source, START, END, 12, use_cache=False, encode_once=True)
    assert cached.shape == (4, 12) and cached.dtype == np.int32
    np.testing.assert_array_equal(cached, uncached)
    np.testing.assert_array_equal(encoded_once, uncached)


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


def test_beam_search_cached_equals_uncached(model, source):
    cached = mt.beam_search(model, source, START, END, 8, beam_size=4, alpha=0.6)
    uncached = mt.beam_search(model, source, START, END, 8, beam_size=4, alpha=0.6, use_cache=False)
    encoded_once = mt.beam_search(model, source, START, END, 8, beam_size=4, use_cache=False, encode_once=True)
    np.testing.assert_array_equal(cached, uncached)
    np.testing.assert_array_equal(encoded_once, uncached)


def _log_probs_of(model, source, tokens):
    """log p(tokens[t] | source, start + tokens[:t]) for one source row, pad and start banned."""
    prefix = np.array([[START] + list(tokens[:-1])], "int32")
    logits = model((source[None], prefix), training=False).numpy()[0]  # (n, V)
    return _log_probs(logits, [0, START])[np.arange(len(tokens)), tokens]


@pytest.mark.parametrize("alpha", [0.0, 0.6, 2.0])
def test_beam_search_with_a_beam_wider_than_the_tree_is_exhaustive_search(alpha):
    """Vocabulary {pad, start, end, a, b}, 3 steps: 15 complete hypotheses at most, so a beam of
    16 never prunes and must return what exhaustive search returns: the best finished hypothesis
    (ended by ``end``) under log p / lp(length)."""
    import itertools

    keras.utils.set_random_seed(3)
    model = mt.MinTransformer(1, 16, 2, 32, 5, 5, 8, dropout=0.0)
    source = np.array([[3, 4, 4, 0], [4, 3, 0, 0], [3, 3, 3, 4]], "int32")
    steps = 3
    found = mt.beam_search(model, source, START, END, steps, beam_size=16, alpha=alpha)
    for row, src in zip(found, source):
        finished = [list(body) + [END] for n in range(steps) for body in itertools.product([3, 4], repeat=n)]
        scores = [_log_probs_of(model, src, np.array(h)).sum() / mt.length_penalty(len(h), alpha)
                  for h in finished]
        best = finished[int(np.argmax(scores))]
        assert sorted(scores)[-1] - sorted(scores)[-2] > 1e-6  # no tie to break
        np.testing.assert_array_equal(row, best + [0] * (steps - len(best)))


def test_beam_search_prefers_a_finished_hypothesis_to_a_cut_off_one():
    """With alpha = 0 and 1 step, the cut-off hypotheses [a] and [b] score log p(a), log p(b);
    the finished [end] scores log p(end). Whatever is most probable, the answer is [end]."""
    keras.utils.set_random_seed(4)
    model = mt.MinTransformer(1, 16, 2, 32, 5, 5, 8, dropout=0.0)
    source = np.array([[3, 4, 4, 0], [4, 3, 0, 0], [3, 3, 3, 4]], "int32")
    found = mt.beam_search(model, source, START, END, 1, beam_size=3, alpha=0.0)
    np.testing.assert_array_equal(found, np.full((3, 1), END))
    greedy = mt.greedy_decode(model, source, START, END, 1)
    assert (greedy != END).any()  # for some row the most probable first token is not end


def test_decode_step_masks_fed_back_padding_like_the_full_pass(model, source):
    target = np.array([[START, 5, 0, 6, 0, 7], [START, 0, 0, 8, 3, END],
                       [0, 4, 4, 0, 9, 9], [START, 3, 4, 5, 6, 7]], "int32")
    full = model((source, target), training=False).numpy()
    caches = model.start_cache(source, max_length=10)
    for t in range(target.shape[1]):
        logits, caches = model.decode_step(target[:, t:t + 1], t, caches, source)
        np.testing.assert_allclose(logits.numpy(), full[:, t], atol=1e-4)


def test_a_decoded_model_is_freed():
    import gc
    import weakref

    def decode_and_forget():
        model = mt.MinTransformer(1, 16, 2, 32, 7, 7, 8, dropout=0.0)
        tokens = np.array([[3, 4, 5, 0]], "int32")
        mt.greedy_decode(model, tokens, START, END, 4)
        mt.greedy_decode(model, tokens, START, END, 4, use_cache=False)
        mt.beam_search(model, tokens, START, END, 4, beam_size=2)
        return weakref.ref(model)

    ref = decode_and_forget()
    gc.collect()
    assert ref() is None


def test_length_penalty_matches_wu_et_al():
    assert mt.length_penalty(1, 0.6) == pytest.approx(1.0)
    assert mt.length_penalty(10, 0.6) == pytest.approx(((5 + 10) / 6) ** 0.6)
    assert mt.length_penalty(10, 0.0) == 1.0


def test_decoding_rejects_a_max_length_beyond_the_model(model, source):
    with pytest.raises(ValueError, match="max_length=41.*max_length=40"):
        mt.greedy_decode(model, source, START, END, max_length=41)
