"""The whole Transformer: behaviour of its masks, tied embeddings, attention maps, Table 3 sizes."""

import keras
import mintransformer as mt
import numpy as np
import pytest
from keras import ops

V = 13


def logits_of(model, source, target):
    return ops.convert_to_numpy(model((source, target), training=False))


@pytest.fixture
def tokens(rng):
    """A source (2, 6) and a target (2, 5), ids in 1..V-1, some padding at the ends."""
    source = rng.integers(1, V, size=(2, 6))
    source[1, -2:] = 0
    target = rng.integers(1, V, size=(2, 5))
    target[0, -1] = 0
    return source, target


# --- masks, seen from outside ------------------------------------------------------------------


def test_future_target_tokens_do_not_change_earlier_logits(tiny_transformer, tokens):
    model = tiny_transformer()
    source, target = tokens
    before = logits_of(model, source, target)
    changed = target.copy()
    changed[:, 3:] = target[:, 3:] % (V - 1) + 1  # a different id at every future position
    after = logits_of(model, source, changed)
    np.testing.assert_allclose(after[:, :3], before[:, :3], atol=1e-6)
    assert not np.allclose(after[:, 3:], before[:, 3:], atol=1e-3)


def test_extra_source_padding_does_not_change_logits(tiny_transformer, tokens):
    model = tiny_transformer()
    source, target = tokens
    padded = np.concatenate([source, np.zeros((2, 4), source.dtype)], axis=1)  # S: 6 -> 10
    np.testing.assert_allclose(logits_of(model, padded, target), logits_of(model, source, target),
                               atol=1e-5)


def test_padded_target_positions_do_not_change_real_positions(tiny_transformer, tokens):
    model = tiny_transformer()
    source, target = tokens
    padded = np.concatenate([target, np.zeros((2, 3), target.dtype)], axis=1)  # T: 5 -> 8
    np.testing.assert_allclose(logits_of(model, source, padded)[:, :5],
                               logits_of(model, source, target), atol=1e-5)


def test_padded_batch_equals_each_sequence_alone(tiny_transformer, rng):
    model = tiny_transformer()
    lengths = [(6, 5), (3, 2)]  # (source, target) lengths of the two examples
    sources = [rng.integers(1, V, size=s) for s, _ in lengths]
    targets = [rng.integers(1, V, size=t) for _, t in lengths]
    source = np.zeros((2, 6), "int64")
    target = np.zeros((2, 5), "int64")
    for i, (s, t) in enumerate(lengths):
        source[i, :s], target[i, :t] = sources[i], targets[i]
    batch = logits_of(model, source, target)
    for i, (s, t) in enumerate(lengths):
        alone = logits_of(model, sources[i][None], targets[i][None])
        np.testing.assert_allclose(batch[i, :t], alone[0], atol=1e-5)


def test_source_tokens_change_the_logits(tiny_transformer, tokens):
    model = tiny_transformer()
    source, target = tokens
    other = source.copy()
    other[:, 0] = other[:, 0] % (V - 1) + 1
    assert not np.allclose(logits_of(model, other, target), logits_of(model, source, target),
                           atol=1e-4)


# --- tied embeddings ---------------------------------------------------------------------------


def test_shared_embeddings_are_one_matrix_used_three_times(tiny_transformer, tokens):
    model = tiny_transformer(share_embeddings=True)
    source, target = tokens
    logits = logits_of(model, source, target)
    embedding_vars = [v for v in model.weights if v.name == "embeddings"]
    assert len(embedding_vars) == 1
    assert model.target_embedding is model.source_embedding
    assert model.final_layer is None
    E = ops.convert_to_numpy(embedding_vars[0])  # (V, D)
    assert E.shape == (V, 16)
    # The decoder output x, then logits = x E^T with the same E.
    context = model.encode(source)
    x = model.decoder(model.target_embedding(target), context,
                      self_mask=mt.decoder_self_mask(target), cross_mask=mt.padding_mask(source))
    np.testing.assert_allclose(logits, ops.convert_to_numpy(x) @ E.T, atol=1e-5)
    # Untied, the model holds one target embedding and a final Dense (with bias) more.
    untied = tiny_transformer(share_embeddings=False)
    untied((source, target))
    d = 16
    assert untied.count_params() - model.count_params() == V * d + (d * V + V)


def test_gradient_of_the_tied_matrix_collects_both_uses(tiny_transformer, rng):
    import tensorflow as tf

    model = tiny_transformer(share_embeddings=True, dropout=0.0)
    source = rng.integers(1, 7, size=(2, 6))  # ids 7..12 appear in no input
    target = rng.integers(1, 7, size=(2, 5))
    model((source, target))
    (E,) = [v for v in model.trainable_weights if v.name == "embeddings"]
    with tf.GradientTape() as tape:
        loss = mt.masked_loss(target, model((source, target)))
    grad = ops.convert_to_numpy(ops.convert_to_tensor(tape.gradient(loss, E)))
    # Rows of ids that are never embedded still get a gradient: from the output projection.
    assert np.all(np.abs(grad[7:]).sum(-1) > 0)
    # Untied, the same rows of the source embedding get none.
    untied = tiny_transformer(dropout=0.0)
    untied((source, target))
    E_src = untied.source_embedding.embedding.embeddings
    with tf.GradientTape() as tape:
        loss = mt.masked_loss(target, untied((source, target)))
    grad = ops.convert_to_numpy(ops.convert_to_tensor(tape.gradient(loss, E_src)))
    np.testing.assert_array_equal(grad[7:], 0.0)


# --- attention maps ----------------------------------------------------------------------------


def test_attention_scores_for_every_layer(tiny_transformer, tokens):
    model = tiny_transformer()
    source, target = tokens
    logits, scores = model((source, target), training=False, return_attention_scores=True)
    np.testing.assert_allclose(logits, logits_of(model, source, target), atol=1e-6)
    as_numpy = model.attention_scores(source, target)
    expected_shapes = {}
    for i in range(2):
        expected_shapes[f"encoder/layer_{i}/self_attention"] = (2, 4, 6, 6)
        expected_shapes[f"decoder/layer_{i}/self_attention"] = (2, 4, 5, 5)
        expected_shapes[f"decoder/layer_{i}/cross_attention"] = (2, 4, 5, 6)
    assert {k: tuple(v.shape) for k, v in scores.items()} == expected_shapes
    assert {k: v.shape for k, v in as_numpy.items()} == expected_shapes
    source_pad = source == 0  # (B, S)
    for name, weights in as_numpy.items():
        np.testing.assert_array_equal(weights, ops.convert_to_numpy(scores[name]))
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
        if name.startswith("decoder") and name.endswith("self_attention"):
            upper = np.triu(np.ones((5, 5), bool), k=1)
            assert np.all(weights[:, :, upper] == 0.0), name
        else:  # padded source keys get exactly zero weight
            assert np.all(weights.transpose(0, 3, 1, 2)[source_pad] == 0.0), name


# --- post-norm and pre-norm --------------------------------------------------------------------


def test_pre_norm_has_final_norms_and_differs_from_post_norm(tiny_transformer, tokens):
    source, target = tokens
    post = tiny_transformer()
    pre = tiny_transformer(norm_first=True)
    post((source, target))
    pre((source, target))
    assert post.encoder.final_norm is None and post.decoder.final_norm is None
    assert isinstance(pre.encoder.final_norm, mt.LayerNormalization)
    assert isinstance(pre.decoder.final_norm, mt.LayerNormalization)
    assert pre.count_params() - post.count_params() == 2 * (2 * 16)
    # Same values in every shared weight: the only difference is where the norms sit.
    post_values = {v.path.split("/", 1)[1]: v for v in post.weights}
    for v in pre.weights:
        name = v.path.split("/", 1)[1]
        if "final_norm" in name:
            continue
        v.assign(post_values[name])
    post_logits, pre_logits = logits_of(post, source, target), logits_of(pre, source, target)
    assert np.all(np.isfinite(pre_logits))
    assert np.max(np.abs(post_logits - pre_logits)) > 1e-2


def test_dropout_is_off_at_inference_and_on_in_training(tiny_transformer, tokens):
    model = tiny_transformer(dropout=0.3)
    source, target = tokens
    a, b = logits_of(model, source, target), logits_of(model, source, target)
    np.testing.assert_array_equal(a, b)
    trained = ops.convert_to_numpy(model((source, target), training=True))
    assert not np.allclose(trained, a)


# --- the paper's Table 3 -----------------------------------------------------------------------


def paper_param_count(num_layers, d_model, dff, vocab):
    """Parameters of the tied Transformer, counted layer by layer from section 3."""
    attention = 4 * (d_model * d_model + d_model)  # W^Q, W^K, W^V, W^O, with biases
    ffn = (d_model * dff + dff) + (dff * d_model + d_model)  # W_1, b_1, W_2, b_2
    norm = 2 * d_model  # gamma, beta
    encoder_layer = attention + ffn + 2 * norm
    decoder_layer = 2 * attention + ffn + 3 * norm
    embedding = vocab * d_model  # one matrix: source, target and pre-softmax (section 3.4)
    return embedding + num_layers * (encoder_layer + decoder_layer)


@pytest.mark.parametrize("name, d_model, num_heads, dff, expected, millions, digits", [
    ("base", 512, 8, 2048, 63_082_496, 63.1, 1),  # Table 3 prints 65M
    ("big", 1024, 16, 4096, 214_245_376, 214, 0),  # Table 3 prints 213M
])
def test_table_3_parameter_counts(name, d_model, num_heads, dff, expected, millions, digits):
    assert paper_param_count(6, d_model, dff, 37_000) == expected
    model = mt.MinTransformer(num_layers=6, d_model=d_model, num_heads=num_heads, dff=dff,
                              input_vocab_size=37_000, target_vocab_size=37_000, max_length=8,
                              share_embeddings=True)
    tiny = np.ones((1, 3), "int32")
    logits = model((tiny, tiny))
    assert tuple(logits.shape) == (1, 3, 37_000)
    trainable = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
    assert trainable == expected
    assert model.count_params() == expected
    assert round(trainable / 1e6, digits) == millions
    del model
    keras.backend.clear_session()
