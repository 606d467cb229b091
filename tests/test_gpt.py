"""The decoder-only model (chapter 12): the reference checks of the encoder-decoder, the cache,
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
    step, _ = model.decode_step(tokens[:1, :4], 0, model.start_cache(1, 9))  # the cached path
    assert keras.backend.standardize_dtype(step.dtype) == "float32" and np.all(np.isfinite(step))
    out = mt.greedy_generate(model, tokens[:1, :4], 5)  # (1, 5) int32 ids: finiteness says nothing
    sequence = list(tokens[0, :4])  # each id is the argmax of the float16 model's own full pass
    for token in out[0]:
        scores = logits_of(model, [sequence])[0, -1]
        scores[0] = -np.inf
        top2 = np.sort(scores)[-2:]
        if top2[1] - top2[0] > 1e-2:  # a near-tie may round either way between the two paths
            assert token == scores.argmax()
        sequence.append(int(token))


@pytest.mark.parametrize("tied", [True, False], ids=["tied", "untied"])
def test_dtype_mixed_float16_reaches_every_sub_layer(tied, rng):
    """``MinGPT(..., dtype="mixed_float16")``, under the float32 global policy: float16 compute in every
    layer, its own (embedding, dropout, decoder, output layer) and theirs; float32 weights and logits."""
    model = mt.MinGPT(2, 16, 4, 32, V, 24, share_embeddings=tied, dtype="mixed_float16")
    tokens = rng.integers(3, V, size=(2, 6)).astype("int32")
    logits = model(tokens, training=False)
    own = [model.embedding, model.embedding_dropout, model.decoder] + ([] if tied else [model.final_layer])
    every = list(model._flatten_layers(include_self=False))
    assert all(layer in every for layer in own) and len(every) > len(own)
    for layer in every:
        assert layer.compute_dtype == "float16", layer.path
        assert layer.variable_dtype == "float32", layer.path
    assert all(keras.backend.standardize_dtype(w.dtype) == "float32" for w in model.weights)
    x = model.decoder(model.embedding(tokens), None, self_mask=mt.decoder_self_mask(tokens))
    assert keras.backend.standardize_dtype(x.dtype) == "float16"
    assert keras.backend.standardize_dtype(model.output_projection(x).dtype) == "float16"
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    caches = model.start_cache(2, 8)
    assert keras.backend.standardize_dtype(caches[0]["keys"].dtype) == "float16"
    reference = mt.MinGPT(2, 16, 4, 32, V, 24, share_embeddings=tied)
    reference(tokens)
    reference.set_weights(model.get_weights())  # the same weights in float32: logits close, not equal
    difference = np.abs(logits_of(reference, tokens) - ops.convert_to_numpy(logits)).max()
    assert 0 < difference < 0.05, difference


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


def test_decode_step_returns_the_logits_of_the_last_position_fed(model, tokens):
    """Fed n tokens, ``decode_step`` returns the logits at the last of them, those that predict the
    next token (as ``MinTransformer.decode_step`` does): not those of the first, in eager mode,
    inside tf.function and under XLA, for a Python int, a NumPy int and a tensor position."""
    import tensorflow as tf

    full = logits_of(model, tokens[:, :6])  # (3, 6, V)
    _, caches = model.decode_step(tokens[:, :2], 0, model.start_cache(3, 10))

    def step(tokens, position, caches):
        return model.decode_step(tokens, position, caches)

    ways = {"eager": step, "tf.function": tf.function(step), "XLA": tf.function(step, jit_compile=True)}
    for name, run in ways.items():
        for position in (2, np.int32(2), tf.constant(2)):
            logits, _ = run(tokens[:, 2:6], position, caches)  # positions 2, 3, 4, 5
            logits = ops.convert_to_numpy(logits)
            np.testing.assert_allclose(logits, full[:, 5], atol=1e-4, err_msg=name)
            assert not np.allclose(logits, full[:, 2], atol=1e-3), name


def test_a_step_past_the_context_raises_for_python_and_numpy_ints(lm):
    for position in (24, np.int64(24)):
        with pytest.raises(ValueError, match="max_length=24"):
            lm.decode_step(np.array([[3]], "int32"), position, lm.start_cache(1, 30))
    with pytest.raises(ValueError, match="past the context"):
        lm.decode_step(np.array([[3, 4]], "int32"), np.int32(23), lm.start_cache(1, 30))


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


@pytest.mark.parametrize("generate", [mt.greedy_generate, mt.sample_generate], ids=["greedy", "sample"])
def test_generation_refuses_prompts_that_are_not_ids_of_the_vocabulary(lm, generate):
    """Under XLA an id past the vocabulary is clamped to the last row, and int32 truncates 3.7 to 3:
    both are refused before the compiled loop runs."""
    with pytest.raises(ValueError, match=f"ids from 0 to {V - 1}, got ids from 3 to {V}"):
        generate(lm, [[3, V]], 2)
    with pytest.raises(ValueError, match="got ids from -1 to 3"):
        generate(lm, np.array([[-1, 3]]), 2)
    for wrong in ([[3.7, 4.0]], np.array([[3.0]]), [[True]]):
        with pytest.raises(TypeError, match="prompts must hold integer ids"):
            generate(lm, wrong, 2)
    with pytest.raises(ValueError, match=f"end_id must be an id from 0 to {V - 1}"):
        generate(lm, [[3]], 2, end_id=V)
    assert generate(lm, [np.array([3, 4], np.int64)], 2, end_id=np.int64(END)).shape == (1, 2)


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
    # The sums 0 and 1 (0+0, 0+1, 1+0) are all held out: no training answer is "0" or "1" (chapter 12).
    assert {"0+0=", "0+1=", "1+0="} <= {p for p, _ in test} and not {"0", "1"} & {a for _, a in train}


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


# --- GPT-2's forward pass, written in NumPy ------------------------------------------------------
# Counting parameters cannot tell pre-norm from post-norm, nor GELU from ReLU. These functions
# follow the structure of OpenAI's released GPT-2 code (github.com/openai/gpt-2, src/model.py:
# norm, conv1d, attn, mlp, block, model, with its parameter names), written again in NumPy, in
# float64, with no code of the package. A MinGPT with GPT-2's switches, given the same weights,
# must compute the same logits.


def _gpt2_gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _gpt2_norm(x, g, b, epsilon=1e-5):
    u = np.mean(x, axis=-1, keepdims=True)
    n = x - u
    s = np.mean(np.square(n), axis=-1, keepdims=True)
    return n / np.sqrt(s + epsilon) * g + b


def _gpt2_conv1d(x, w, b):  # a 1x1 convolution: w (nx, nf) applied to every position
    return x @ w + b


def _gpt2_attn(x, p, n_head, past=None):
    """x (B, T, D) -> (output (B, T, D), present (B, 2, h, T, d)); past: the earlier keys and values."""
    def split_heads(t):  # (B, T, D) -> (B, h, T, D/h)
        return t.reshape(t.shape[0], t.shape[1], n_head, -1).transpose(0, 2, 1, 3)

    c = _gpt2_conv1d(x, p["attn/c_attn/w"], p["attn/c_attn/b"])  # (B, T, 3D)
    q, k, v = (split_heads(t) for t in np.split(c, 3, axis=2))
    present = np.stack([k, v], axis=1)
    if past is not None:
        k, v = np.concatenate([past[:, 0], k], axis=-2), np.concatenate([past[:, 1], v], axis=-2)
    w = q @ np.swapaxes(k, -1, -2) / np.sqrt(v.shape[-1])  # (B, h, nd, ns)
    nd, ns = w.shape[-2:]
    b = (np.arange(nd)[:, None] >= np.arange(ns)[None, :] - ns + nd).astype(w.dtype)  # lower right triangle
    w = w * b - 1e10 * (1 - b)
    w = np.exp(w - w.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    a = (w @ v).transpose(0, 2, 1, 3).reshape(x.shape)  # heads merged
    return _gpt2_conv1d(a, p["attn/c_proj/w"], p["attn/c_proj/b"]), present


def _gpt2_block(x, p, n_head, past=None):
    a, present = _gpt2_attn(_gpt2_norm(x, p["ln_1/g"], p["ln_1/b"]), p, n_head, past)
    x = x + a
    h = _gpt2_gelu(_gpt2_conv1d(_gpt2_norm(x, p["ln_2/g"], p["ln_2/b"]), p["mlp/c_fc/w"], p["mlp/c_fc/b"]))
    return x + _gpt2_conv1d(h, p["mlp/c_proj/w"], p["mlp/c_proj/b"]), present


def _gpt2_model(params, X, n_head, past=None):
    """X (B, T) ids -> (logits (B, T, V), presents); ``past`` (B, N, 2, h, P, d) continues after P positions."""
    past_length = 0 if past is None else past.shape[-2]
    h = params["wte"][X] + params["wpe"][past_length + np.arange(X.shape[1])][None]
    presents = []
    for layer, p in enumerate(params["h"]):
        h, present = _gpt2_block(h, p, n_head, None if past is None else past[:, layer])
        presents.append(present)
    h = _gpt2_norm(h, params["ln_f/g"], params["ln_f/b"])
    return h @ params["wte"].T, np.stack(presents, axis=1)


def _gpt2_params(rng, n_layer, d, vocab, n_ctx):
    """Random GPT-2 weights, rounded to float32 (the Keras copy's precision). The embeddings are as
    small as GPT-2's initial ones, so that the first norm's epsilon matters; the other weights are
    larger than GPT-2's, so that every nonlinearity works away from zero."""
    def normal(shape, std):
        return rng.normal(0, std, shape).astype(np.float32).astype(np.float64)

    layer = lambda: {  # noqa: E731
        "ln_1/g": 1 + normal(d, 0.2), "ln_1/b": normal(d, 0.2),
        "attn/c_attn/w": normal((d, 3 * d), 0.3), "attn/c_attn/b": normal(3 * d, 0.2),
        "attn/c_proj/w": normal((d, d), 0.3), "attn/c_proj/b": normal(d, 0.2),
        "ln_2/g": 1 + normal(d, 0.2), "ln_2/b": normal(d, 0.2),
        "mlp/c_fc/w": normal((d, 4 * d), 0.3), "mlp/c_fc/b": normal(4 * d, 0.2),
        "mlp/c_proj/w": normal((4 * d, d), 0.3), "mlp/c_proj/b": normal(d, 0.2),
    }
    return {"wte": normal((vocab, d), 0.02), "wpe": normal((n_ctx, d), 0.01), "h": [layer() for _ in range(n_layer)],
            "ln_f/g": 1 + normal(d, 0.2), "ln_f/b": normal(d, 0.2)}


def _copy_gpt2_into(model, params):
    """GPT-2's weights into a MinGPT: c_attn splits into W^Q, W^K, W^V; ln_1, ln_2 are norm1, norm3."""
    d = model.d_model
    model.embedding.embedding.embeddings.assign(params["wte"])
    model.embedding.position_embedding.embeddings.assign(params["wpe"])
    for layer, p in zip(model.decoder.stack, params["h"]):
        attention = layer.self_attention
        for i, dense in enumerate((attention.wq, attention.wk, attention.wv)):
            dense.kernel.assign(p["attn/c_attn/w"][:, i * d:(i + 1) * d])
            dense.bias.assign(p["attn/c_attn/b"][i * d:(i + 1) * d])
        for dense, name in [(attention.wo, "attn/c_proj"), (layer.ffn.inner, "mlp/c_fc"),
                            (layer.ffn.outer, "mlp/c_proj")]:
            dense.kernel.assign(p[f"{name}/w"])
            dense.bias.assign(p[f"{name}/b"])
        for norm, name in [(layer.norm1, "ln_1"), (layer.norm3, "ln_2")]:
            norm.gamma.assign(p[f"{name}/g"])
            norm.beta.assign(p[f"{name}/b"])
    model.decoder.final_norm.gamma.assign(params["ln_f/g"])
    model.decoder.final_norm.beta.assign(params["ln_f/b"])


GPT2_SWITCHES = dict(norm_first=True, positions="learned", scale_embeddings=False, share_embeddings=True,
                     activation="gelu", norm_epsilon=1e-5, pad_id=-1)


def _gpt2_text(rng, shape):
    """Ids of GPT-2's texts: any id, 0 included (GPT-2's "!"), and a 0 in every row."""
    X = rng.integers(0, V, size=shape)
    X[:, rng.integers(0, shape[1], size=shape[0])[0]] = 0
    X[0, 0] = 0
    return X


def _gpt2_and_mingpt(rng, **changes):
    n_layer, d, n_head, vocab, n_ctx = 2, 16, 4, V, 10
    params = _gpt2_params(rng, n_layer, d, vocab, n_ctx)
    model = mt.MinGPT(n_layer, d, n_head, 4 * d, vocab, n_ctx, dropout=0.0, **dict(GPT2_SWITCHES, **changes))
    model.build((None, None))
    _copy_gpt2_into(model, params)
    return params, model


def test_a_gpt2_shaped_mingpt_computes_gpt2s_forward_pass(rng):
    params, model = _gpt2_and_mingpt(rng)
    X = _gpt2_text(rng, (3, 10))  # GPT-2 has no padding mask: id 0 is a token like any other
    expected, _ = _gpt2_model(params, X, n_head=4)
    assert np.abs(expected).max() > 0.1  # logits of some size (wte is small: they are x wte^T)
    np.testing.assert_allclose(logits_of(model, X), expected, atol=1e-6)


def test_with_the_default_pad_id_a_text_holding_id_0_is_not_gpt2s(rng):
    """pad_id=0 masks the keys that hold id 0, which GPT-2 reads: pad_id=-1 is one of the switches."""
    params, model = _gpt2_and_mingpt(rng, pad_id=0)
    X = _gpt2_text(rng, (3, 10))
    expected, _ = _gpt2_model(params, X, n_head=4)
    assert np.abs(logits_of(model, X) - expected).max() > 1e-3
    no_zero = rng.integers(1, V, size=(3, 10))  # without id 0 the two agree
    np.testing.assert_allclose(logits_of(model, no_zero), _gpt2_model(params, no_zero, n_head=4)[0], atol=1e-6)


@pytest.mark.parametrize("change", [dict(activation="relu"), dict(norm_epsilon=1e-6)], ids=["relu", "epsilon"])
def test_each_gpt2_switch_is_needed_to_match(rng, change):
    """With ReLU, or the package's epsilon, the same weights give other logits: differences 1,000 times
    the tolerance of the match above (the test can tell)."""
    params, model = _gpt2_and_mingpt(rng, **change)
    X = _gpt2_text(rng, (3, 10))
    expected, _ = _gpt2_model(params, X, n_head=4)
    assert np.abs(logits_of(model, X) - expected).max() > 1e-3


def test_post_norm_with_gpt2s_weights_is_not_gpt2(rng):
    """Pre-norm and post-norm have the same parameters (count and shapes) but compute other functions."""
    params, pre = _gpt2_and_mingpt(rng)
    post = mt.MinGPT(2, 16, 4, 64, V, 10, dropout=0.0, **dict(GPT2_SWITCHES, norm_first=False))
    post.build((None, None))
    assert post.count_params() + 2 * 16 == pre.count_params()  # only the final norm is extra
    by_path = {w.path.split("/", 1)[1]: w for w in pre.weights}
    for w in post.weights:
        w.assign(by_path[w.path.split("/", 1)[1]])
    X = _gpt2_text(rng, (3, 10))
    expected, _ = _gpt2_model(params, X, n_head=4)
    assert np.abs(logits_of(post, X) - expected).max() > 1e-2


def test_a_gpt2_shaped_mingpt_decodes_as_gpt2_does_with_its_past(rng):
    """GPT-2's sampler feeds the prompt, then one token with ``past`` and reads ``logits[:, -1]``:
    ``decode_step`` returns that, the logits of the last position fed."""
    params, model = _gpt2_and_mingpt(rng)
    X = _gpt2_text(rng, (2, 7))
    X[:, 6] = 0  # the token fed with the cache is id 0 too
    logits, presents = _gpt2_model(params, X[:, :6], n_head=4)  # the prompt: positions 0 .. 5
    step, caches = model.decode_step(X[:, :6].astype("int32"), 0, model.start_cache(2, 10))
    np.testing.assert_allclose(ops.convert_to_numpy(step), logits[:, -1], atol=1e-6)
    for layer, cache in enumerate(caches):  # the cache holds GPT-2's "present" keys and values
        np.testing.assert_allclose(ops.convert_to_numpy(cache["keys"])[:, :, :6], presents[:, layer, 0], atol=1e-6)
        np.testing.assert_allclose(ops.convert_to_numpy(cache["values"])[:, :, :6], presents[:, layer, 1], atol=1e-6)
    logits, _ = _gpt2_model(params, X[:, 6:7], n_head=4, past=presents)  # one more token, position 6
    step, _ = model.decode_step(X[:, 6:7].astype("int32"), 6, caches)
    np.testing.assert_allclose(ops.convert_to_numpy(step), logits[:, -1], atol=1e-6)


@pytest.mark.parametrize("mode", ["eager", "function", "xla"])
def test_without_padding_id_0_is_read_in_every_mode(rng, mode):
    """pad_id=-1: the full pass and the cached step read id 0 as a token, eagerly, in a tf.function
    and under XLA."""
    import tensorflow as tf

    params, model = _gpt2_and_mingpt(rng)
    X = _gpt2_text(rng, (2, 7)).astype("int32")
    expected, _ = _gpt2_model(params, X, n_head=4)

    def both(tokens):
        step, _ = model.decode_step(tokens, 0, model.start_cache(2, 10))
        return model(tokens, training=False), step

    run = both if mode == "eager" else tf.function(both, jit_compile=mode == "xla")
    full, step = run(tf.constant(X))
    np.testing.assert_allclose(ops.convert_to_numpy(full), expected, atol=1e-5)
    np.testing.assert_allclose(ops.convert_to_numpy(step), expected[:, -1], atol=1e-5)


def test_without_padding_generation_can_write_id_0_and_fills_with_minus_1(rng):
    """With pad_id=-1 nothing is banned: greedy generation is the plain argmax of the full pass (id 0
    included), cached or not; after end_id the row holds -1."""
    keras.utils.set_random_seed(3)
    model = mt.MinGPT(2, 16, 4, 32, 3, 24, dropout=0.0, pad_id=-1)  # 3 ids: 0 is generated often
    prompts = [list(rng.integers(0, 3, size=n)) for n in (4, 2, 4)]
    out = mt.greedy_generate(model, prompts, 8)
    np.testing.assert_array_equal(mt.greedy_generate(model, prompts, 8, use_cache=False), out)
    for prompt, row in zip(prompts, out):
        sequence = list(prompt)
        for _ in range(8):
            sequence.append(int(logits_of(model, [sequence])[0, -1].argmax()))
        assert sequence[len(prompt):] == row.tolist()
    assert (out == 0).any()
    end = int(out[0, 0])
    stopped = mt.greedy_generate(model, prompts[:1], 8, end_id=end)
    assert stopped[0, 0] == end and (stopped[0, 1:] == -1).all()


@pytest.mark.parametrize("pad_id", [-2, 13, 1.0, True, None])
def test_a_pad_id_that_is_neither_an_id_nor_minus_1_raises(pad_id):
    with pytest.raises(ValueError, match="pad_id"):
        mt.MinGPT(1, 8, 2, 16, V, 8, pad_id=pad_id)


def test_numpy_int_pad_ids_are_accepted_and_saved_as_ints():
    model = mt.MinGPT(1, 8, 2, 16, V, 8, pad_id=np.int64(-1))
    assert model.get_config()["pad_id"] == -1 and type(model.get_config()["pad_id"]) is int


# --- GPT-2's initialisation ---------------------------------------------------------------------


def test_gpt2_initialization_draws_gpt2s_weights():
    keras.utils.set_random_seed(0)
    model = mt.MinGPT(4, 64, 4, 256, 500, 300, initialization="gpt2")
    model.build((None, None))
    residual = 0.02 / np.sqrt(2 * 4)
    for w in model.weights:
        values, name = ops.convert_to_numpy(w), w.path
        if name.endswith("bias") or name.endswith("beta"):
            assert not values.any(), name
        elif name.endswith("gamma"):
            assert (values == 1).all(), name
        else:
            std = 0.01 if "position" in name else residual if ("wo" in name or "outer" in name) else 0.02
            assert abs(values.mean()) < 0.1 * std and abs(values.std() / std - 1) < 0.05, (name, values.std())


def test_the_default_initialization_is_unchanged_by_the_switch():
    """Seeded, a default model draws its weights as before the switch existed (the shipped addition
    model was trained from them), and the token embedding is the package's, not GPT-2's."""
    def weights(**options):
        keras.utils.set_random_seed(0)
        model = mt.MinGPT(2, 64, 4, 256, 15, 9, dropout=0.0, **options)
        model.build((None, None))
        return [ops.convert_to_numpy(w) for w in model.weights]

    default, gpt2 = weights(), weights(initialization="gpt2")
    for a, b in zip(default, weights(activation="gelu", norm_epsilon=1e-5)):  # no draw changes
        np.testing.assert_array_equal(a, b)
    assert abs(default[0].std() - 64**-0.5) < 0.1 * 64**-0.5 and abs(gpt2[0].std() - 0.02) < 0.002
    # Without sqrt(d_model), the default's learned positions start sqrt(d_model / 2) times as large.
    assert 4.5 < default[1].std() / default[0].std() < 7 and gpt2[1].std() < gpt2[0].std()


@pytest.mark.parametrize("option, value", [("activation", "swish"), ("initialization", "xavier")])
def test_unknown_gpt2_options_raise(option, value):
    with pytest.raises(ValueError, match=option):
        mt.MinGPT(1, 8, 2, 16, V, 8, **{option: value})


def test_the_gpt2_options_survive_saving(tmp_path, rng):
    model = mt.MinGPT(1, 16, 4, 64, V, 10, activation="gelu", norm_epsilon=1e-5, initialization="gpt2", pad_id=-1)
    tokens = _gpt2_text(rng, (2, 5)).astype("int32")
    model(tokens)
    model.save(tmp_path / "gpt2.keras")
    loaded = keras.saving.load_model(tmp_path / "gpt2.keras")
    assert loaded.get_config() == model.get_config()
    assert loaded.decoder.stack[0].ffn.inner.activation is mt.gpt.gelu
    assert loaded.decoder.final_norm.epsilon == 1e-5 and loaded.pad_id == -1
    np.testing.assert_array_equal(logits_of(loaded, tokens), logits_of(model, tokens))
