"""The decoder-only model (chapter 11): the reference checks of the encoder-decoder, the cache,
generation, and its errors."""

import keras
import mintransformer as mt
import numpy as np
import pytest
from keras import ops

from mintransformer import data

V, END = 13, 2


def logits_of(model, tokens):
    return ops.convert_to_numpy(model(np.asarray(tokens, "int32"), training=False))


@pytest.fixture(scope="module", params=[True, False], ids=["pre-norm", "post-norm"])
def model(request):
    keras.utils.set_random_seed(0)
    m = mt.MinGPT(2, 16, 4, 32, V, 24, dropout=0.1, norm_first=request.param)
    m(np.ones((1, 3), "int32"))
    return m


@pytest.fixture(scope="module")
def lm():
    """The pre-norm model alone, for the tests that compile decoding loops (seconds each)."""
    keras.utils.set_random_seed(1)
    m = mt.MinGPT(2, 16, 4, 32, V, 24, dropout=0.1)
    m(np.ones((1, 3), "int32"))
    return m


@pytest.fixture
def tokens(rng):
    """(3, 8) ids in 3..V-1: no pad, start or end."""
    return rng.integers(3, V, size=(3, 8)).astype("int32")


# --- the reference checks of the encoder-decoder ------------------------------------------------


def test_future_tokens_do_not_change_earlier_logits(model, tokens):
    before = logits_of(model, tokens)
    changed = tokens.copy()
    changed[:, 5:] = (tokens[:, 5:] - 2) % (V - 3) + 3  # another id at every future position
    after = logits_of(model, changed)
    np.testing.assert_allclose(after[:, :5], before[:, :5], atol=1e-6)
    assert not np.allclose(after[:, 5:], before[:, 5:], atol=1e-3)


def test_padding_after_a_sequence_does_not_change_it(model, tokens):
    padded = np.concatenate([tokens, np.zeros((3, 4), "int32")], axis=1)
    np.testing.assert_allclose(logits_of(model, padded)[:, :8], logits_of(model, tokens), atol=1e-5)


def test_padded_batch_equals_each_sequence_alone(model, rng):
    sequences = [rng.integers(3, V, size=n) for n in (7, 3, 5)]
    batch = logits_of(model, data.pad(sequences))
    for row, sequence in zip(batch, sequences):
        np.testing.assert_allclose(row[: len(sequence)], logits_of(model, [sequence])[0], atol=1e-5)


def test_no_cross_attention_anywhere(model):
    assert all(layer.cross_attention is None and layer.norm2 is None for layer in model.decoder.stack)
    assert not any("cross" in w.path for w in model.weights)


def test_tied_output_is_the_token_embedding(model, tokens):
    x = model.decoder(model.embedding(tokens), None, self_mask=mt.decoder_self_mask(tokens))
    expected = ops.matmul(x, ops.transpose(model.embedding.embedding.embeddings))
    np.testing.assert_allclose(logits_of(model, tokens), ops.convert_to_numpy(expected), atol=1e-5)
    assert model.final_layer is None


def test_gpt2_small_has_124m_parameters():
    """GPT-2 small (Radford et al., 2019): 12 layers, d_model 768, 12 heads, dff 3072, 50,257 tokens,
    1,024 positions, tied embeddings: 124,439,808 parameters, the count of the released weights."""
    gpt2 = mt.MinGPT(12, 768, 12, 3072, 50257, 1024)
    gpt2.build((None, None))
    assert gpt2.count_params() == 124_439_808


def test_attention_scores_are_causal_rows_of_probabilities(model, tokens):
    scores = model.attention_scores(tokens)
    assert sorted(scores) == ["layer_0/self_attention", "layer_1/self_attention"]
    for w in scores.values():
        assert w.shape == (3, 4, 8, 8)
        np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)
        assert np.all(np.triu(w, k=1) == 0)


def test_mixed_float16_logits_are_finite_float32(mixed_float16, rng):
    model = mt.MinGPT(1, 16, 4, 32, V, 24)
    tokens = rng.integers(3, V, size=(2, 10)).astype("int32")
    tokens[1, 6:] = 0
    logits = model(tokens, training=False)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    assert np.all(np.isfinite(ops.convert_to_numpy(logits)))
    assert np.all(np.isfinite(mt.greedy_generate(model, tokens[:1, :4], 5)))


def test_saves_and_loads_identically(model, tokens, tmp_path):
    model.save(tmp_path / "gpt.keras")
    loaded = keras.saving.load_model(tmp_path / "gpt.keras")
    assert type(loaded) is mt.MinGPT and loaded.get_config() == model.get_config()
    np.testing.assert_array_equal(logits_of(loaded, tokens), logits_of(model, tokens))


# --- the cache ----------------------------------------------------------------------------------


def test_decode_step_equals_the_full_pass(model, tokens):
    full = logits_of(model, tokens)
    caches = model.start_cache(3, 10)
    for t in range(8):
        logits, caches = model.decode_step(tokens[:, t:t + 1], t, caches)
        np.testing.assert_allclose(ops.convert_to_numpy(logits), full[:, t], atol=1e-4)


def test_a_prefill_of_several_positions_equals_one_at_a_time(model, tokens):
    last, one_pass = model.decode_step(tokens[:, :5], 0, model.start_cache(3, 10))
    np.testing.assert_allclose(ops.convert_to_numpy(last), logits_of(model, tokens[:, :5])[:, 4], atol=1e-4)
    logits, caches = model.decode_step(tokens[:, 5:6], 5, one_pass)
    np.testing.assert_allclose(ops.convert_to_numpy(logits), logits_of(model, tokens[:, :6])[:, 5], atol=1e-4)
    for a, b in zip(one_pass, model.start_cache(3, 10)):
        assert a["keys"].shape == b["keys"].shape and "cross_keys" not in a


# --- generation ---------------------------------------------------------------------------------


def test_greedy_generation_is_the_argmax_of_the_full_pass(lm, rng):
    prompts = [list(rng.integers(3, V, size=n)) for n in (4, 1, 4, 6)]  # lengths differ
    out = mt.greedy_generate(lm, prompts, 7)
    assert out.shape == (4, 7) and out.dtype == np.int32
    for prompt, row in zip(prompts, out):
        sequence = list(prompt)
        for _ in range(7):
            logits = logits_of(lm, [sequence])[0, -1]
            logits[0] = -np.inf  # pad is never generated
            sequence.append(int(logits.argmax()))
        assert sequence[len(prompt):] == row.tolist()


@pytest.mark.parametrize("settings", [{}, dict(temperature=0.7, top_k=4), dict(temperature=1.5, top_p=0.8)],
                         ids=["greedy", "top-k", "top-p"])
def test_cached_and_uncached_generation_return_identical_tokens(lm, rng, settings):
    prompts = [list(rng.integers(3, V, size=n)) for n in (3, 5, 3, 2)]
    generate = mt.sample_generate if settings else mt.greedy_generate
    cached = generate(lm, prompts, 9, end_id=END, **settings)
    uncached = generate(lm, prompts, 9, end_id=END, use_cache=False, **settings)
    np.testing.assert_array_equal(cached, uncached)


def test_generation_stops_at_the_end_token_and_pads(lm, rng):
    prompts = rng.integers(3, V, size=(6, 3))
    free = mt.greedy_generate(lm, prompts, 10)
    end = int(np.bincount(free.ravel()).argmax())  # a token the model does generate
    out = mt.greedy_generate(lm, prompts, 10, end_id=end)
    for row, unstopped in zip(out, free):
        stops = np.flatnonzero(unstopped == end)
        if len(stops):
            np.testing.assert_array_equal(row[: stops[0] + 1], unstopped[: stops[0] + 1])
            assert (row[stops[0] + 1:] == 0).all()
        else:
            np.testing.assert_array_equal(row, unstopped)


def test_sampling_is_reproducible_from_its_seed(lm, rng):
    prompts = rng.integers(3, V, size=(8, 2))
    a = mt.sample_generate(lm, prompts, 12, temperature=1.0, seed=5)
    np.testing.assert_array_equal(a, mt.sample_generate(lm, prompts, 12, temperature=1.0, seed=5))
    assert not np.array_equal(a, mt.sample_generate(lm, prompts, 12, temperature=1.0, seed=6))


def test_a_tiny_temperature_and_top_k_of_one_are_greedy(lm, rng):
    prompts = rng.integers(3, V, size=(5, 3))
    greedy = mt.greedy_generate(lm, prompts, 8)
    np.testing.assert_array_equal(mt.sample_generate(lm, prompts, 8, top_k=1, seed=1), greedy)
    np.testing.assert_array_equal(mt.sample_generate(lm, prompts, 8, temperature=1e-4, seed=2), greedy)


def test_prompts_of_different_lengths_run_apart_and_come_back_in_order(lm, rng):
    prompts = [list(rng.integers(3, V, size=n)) for n in (2, 5, 3)]  # one prompt of each length
    for generate in (mt.greedy_generate, lambda *a: mt.sample_generate(*a, seed=3, top_p=0.9)):
        together = generate(lm, prompts, 6)
        alone = [generate(lm, [p], 6)[0] for p in prompts]
        np.testing.assert_array_equal(together, np.array(alone))


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize("call, message", [
    (lambda m: mt.greedy_generate(m, [[3] * 25], 1), "longer than the context"),
    (lambda m: mt.greedy_generate(m, [[3] * 20], 6), "do not fit the context"),
    (lambda m: mt.greedy_generate(m, [[3]], 0), "max_new_tokens"),
    (lambda m: mt.greedy_generate(m, [[]], 3), "at least one token"),
    (lambda m: mt.sample_generate(m, [[3]], 3, top_k=0), "top_k"),
    (lambda m: mt.sample_generate(m, [[3]], 3, top_k=1.5), "top_k"),
    (lambda m: mt.sample_generate(m, [[3]], 3, top_k=V + 1), "top_k"),
    (lambda m: mt.sample_generate(m, [[3]], 3, top_p=0.0), "top_p"),
    (lambda m: mt.sample_generate(m, [[3]], 3, top_p=1.2), "top_p"),
    (lambda m: mt.sample_generate(m, [[3]], 3, temperature=0.0), "temperature"),
    (lambda m: mt.sample_generate(m, [[3]], 3, temperature=-1.0), "temperature"),
], ids=["prompt-too-long", "no-room", "no-tokens", "empty-prompt", "top-k-0", "top-k-float", "top-k-above-V",
        "top-p-0",
        "top-p-above-1", "temperature-0", "temperature-negative"])
def test_bad_generation_settings_raise_clear_errors(lm, call, message):
    assert mt.greedy_generate(lm, [[3] * 20], 5).shape == (1, 5)  # reads 24 tokens: exactly the context
    with pytest.raises(ValueError, match=message):
        call(lm)


def test_the_encoder_decoder_samplers_check_top_k_and_top_p_too(tiny_transformer):
    model = tiny_transformer()
    with pytest.raises(ValueError, match="top_k"):
        mt.sample_decode(model, np.ones((1, 3), "int32"), 1, 2, 4, top_k=0)
    with pytest.raises(ValueError, match="top_p"):
        mt.sample_decode(model, np.ones((1, 3), "int32"), 1, 2, 4, top_p=0.0)


# --- the addition corpus ------------------------------------------------------------------------


def test_the_language_model_labels_are_the_answer_shifted_with_the_prompt_masked():
    tokenizer = data.CharTokenizer(data.ADDITION_ALPHABET)
    inputs, labels = data.encode_lm([("12+345=", "357")], tokenizer)
    assert tokenizer.tokens(inputs[0]) == list("12+345=357")
    assert labels[0][:6] == [0] * 6
    assert tokenizer.tokens(labels[0][6:]) == ["3", "5", "7", "<end>"]
    assert len(inputs[0]) == len(labels[0])
    assert len(data.addition_problems(1)) == 100 and ("9+9=", "18") in data.addition_problems(1)


def test_a_step_past_the_cache_or_the_context_raises(lm):
    caches = lm.start_cache(1, 4)
    with pytest.raises(ValueError, match="cache holds 4 positions"):
        lm.decode_step(np.array([[3, 4, 5]], "int32"), 2, caches)
    with pytest.raises(ValueError, match="max_length=24"):
        lm.decode_step(np.array([[3]], "int32"), 24, lm.start_cache(1, 30))


# --- the addition recipe -------------------------------------------------------------------------


def test_the_addition_split_holds_each_pair_out_in_both_orders():
    from mintransformer.recipes import addition

    tokenizer, train, test = addition.task()
    assert len(train) + len(test) == 10_000 and 900 <= len(test) <= 1100
    seen = {p for p, _ in train}
    assert not any(f"{p[:-1].split('+')[1]}+{p[:-1].split('+')[0]}=" in seen for p, _ in test)
    assert max(len(p) + len(a) for p, a in train + test) == addition.context_length()  # 99+99=198, read whole


def test_the_addition_model_is_built_from_its_seed():
    from mintransformer.recipes import addition

    tokenizer, _, _ = addition.task()
    a, b = addition.build_model(tokenizer, seed=3), addition.build_model(tokenizer, seed=3)
    for model in (a, b):
        model(np.ones((1, 2), "int32"))
    for x, y in zip(a.weights, b.weights):
        np.testing.assert_array_equal(ops.convert_to_numpy(x), ops.convert_to_numpy(y))


def test_the_shipped_addition_model_adds():
    from mintransformer.recipes import addition

    model, tokenizer = addition.load_pretrained()
    _, _, test = addition.task()
    assert addition.answers(model, tokenizer, ["47+38=", "9+9=", "99+99="]) == ["85", "18", "198"]
    assert addition.accuracy(model, tokenizer, test) >= 0.98
