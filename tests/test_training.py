"""Learning-rate schedule (equation 3), masked loss and accuracy, training with Keras."""

import keras
import mintransformer as mt
import numpy as np
import pytest
from keras import ops

# --- TransformerSchedule -----------------------------------------------------------------------


def paper_rate(step, d_model=512, warmup=4000):
    """lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)."""
    return d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)


def rate(schedule, step):
    return float(ops.convert_to_numpy(schedule(step)))


def test_schedule_peak_at_warmup():
    schedule = mt.TransformerSchedule(512)
    peak = rate(schedule, 4000)
    np.testing.assert_allclose(peak, 512 ** -0.5 * 4000 ** -0.5, rtol=1e-5)
    assert round(peak, 6) == 6.99e-4


def test_schedule_equals_equation_3_on_a_grid():
    schedule = mt.TransformerSchedule(512)
    for step in (1, 10, 100, 1000, 3999, 4000, 4001, 10_000, 100_000):
        np.testing.assert_allclose(rate(schedule, step), paper_rate(step), rtol=1e-5)


def test_schedule_rises_then_falls():
    schedule = mt.TransformerSchedule(512)
    rising = [rate(schedule, s) for s in range(1, 4001, 333)] + [rate(schedule, 4000)]
    falling = [rate(schedule, s) for s in range(4000, 40_001, 3000)]
    assert all(a < b for a, b in zip(rising, rising[1:]))
    assert all(a > b for a, b in zip(falling, falling[1:]))
    steps = np.arange(1, 20_000, 7)
    values = ops.convert_to_numpy(schedule(steps))
    assert steps[np.argmax(values)] in range(3995, 4006)


def test_schedule_at_step_zero_is_finite_and_positive():
    schedule = mt.TransformerSchedule(512)
    value = rate(schedule, 0)
    assert np.isfinite(value) and value > 0
    assert value == rate(schedule, 1)  # Keras counts from 0, the paper from 1


def test_schedule_config_round_trip():
    schedule = mt.TransformerSchedule(256, warmup_steps=1000)
    config = schedule.get_config()
    assert config == {"d_model": 256, "warmup_steps": 1000, "total_steps": None, "cooldown_steps": 0, "warmup": True}
    clone = mt.TransformerSchedule.from_config(config)
    for step in (0, 500, 1000, 5000):
        assert rate(clone, step) == rate(schedule, step)
    restored = keras.optimizers.schedules.deserialize(
        keras.optimizers.schedules.serialize(schedule))
    assert isinstance(restored, mt.TransformerSchedule)
    assert restored.get_config() == config


def test_cooldown_leaves_equation_3_bit_for_bit_until_it_starts():
    plain = mt.TransformerSchedule(128, warmup_steps=3000)
    cooled = mt.TransformerSchedule(128, warmup_steps=3000, total_steps=1250, cooldown_steps=500)
    steps = np.arange(0, 751)
    np.testing.assert_array_equal(ops.convert_to_numpy(cooled(steps)), ops.convert_to_numpy(plain(steps)))


def test_cooldown_is_linear_to_one_over_cooldown_steps_at_the_last_update():
    plain = mt.TransformerSchedule(128, warmup_steps=3000)
    cooled = mt.TransformerSchedule(128, warmup_steps=3000, total_steps=1250, cooldown_steps=500)
    for step in (750, 900, 1000, 1249):
        factor = (1250 - step) / 500  # 1 at the start, 1/500 at the last update (step 1249)
        np.testing.assert_allclose(rate(cooled, step), factor * paper_rate(step, 128, 3000), rtol=1e-5)
    assert rate(cooled, 1250) == 0.0 and rate(cooled, 2000) == 0.0  # past the run: no update
    steps = np.arange(750, 1250)
    values = ops.convert_to_numpy(cooled(steps))
    assert (np.diff(values) < 0).all()


def test_cooldown_config_round_trip_and_errors():
    cooled = mt.TransformerSchedule(64, warmup_steps=400, total_steps=1600, cooldown_steps=400)
    restored = keras.optimizers.schedules.deserialize(keras.optimizers.schedules.serialize(cooled))
    assert restored.get_config() == cooled.get_config()
    assert rate(restored, 1500) == rate(cooled, 1500)
    # A checkpoint written before the cool-down existed has no such keys and still loads.
    old = mt.TransformerSchedule.from_config({"d_model": 64, "warmup_steps": 400})
    assert rate(old, 1500) == rate(mt.TransformerSchedule(64, 400), 1500)
    with pytest.raises(ValueError, match="cooldown_steps=500 needs total_steps"):
        mt.TransformerSchedule(64, 400, cooldown_steps=500)
    with pytest.raises(ValueError, match="total_steps=100"):
        mt.TransformerSchedule(64, 400, total_steps=100, cooldown_steps=500)


def test_schedule_drives_a_keras_optimizer():
    schedule = mt.TransformerSchedule(512, warmup_steps=10)
    optimizer = keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9)
    variable = keras.Variable(np.ones(3, "float32"))
    for step in range(3):
        expected = paper_rate(max(step, 1), 512, 10)
        np.testing.assert_allclose(float(optimizer.learning_rate), expected, rtol=1e-6)
        optimizer.apply_gradients([(ops.ones(3), variable)])
    assert int(optimizer.iterations) == 3
    np.testing.assert_allclose(float(optimizer.learning_rate), paper_rate(3, 512, 10), rtol=1e-6)
    # The schedule is saved with the optimizer and comes back (at iteration 0).
    clone = keras.optimizers.Adam.from_config(optimizer.get_config())
    np.testing.assert_allclose(float(clone.learning_rate), paper_rate(1, 512, 10), rtol=1e-6)


# --- masked_loss / masked_accuracy -------------------------------------------------------------


@pytest.fixture
def batch(rng):
    """Targets (B=2, T=5) with padding (id 0) and random logits (B, T, V=7)."""
    y_true = np.array([[3, 1, 4, 0, 0], [5, 2, 6, 1, 0]])
    y_pred = rng.normal(scale=2.0, size=(2, 5, 7)).astype("float32")
    return y_true, y_pred


def numpy_masked_loss(y_true, y_pred, ls=0.0, pad_id=0):
    """-sum(y_smooth * log_softmax), y_smooth = (1 - ls) onehot + ls / V; mean over non-pad."""
    logits = y_pred.astype(np.float64)
    z = logits - logits.max(-1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(-1, keepdims=True))
    vocab = logits.shape[-1]
    y_smooth = (1 - ls) * np.eye(vocab)[y_true] + ls / vocab
    per_token = -(y_smooth * log_probs).sum(-1)
    keep = y_true != pad_id
    return per_token[keep].sum() / keep.sum()


@pytest.mark.parametrize("ls", [0.0, 0.1])
def test_masked_loss_equals_numpy(batch, ls):
    y_true, y_pred = batch
    loss = float(mt.masked_loss(y_true, y_pred, label_smoothing=ls))
    np.testing.assert_allclose(loss, numpy_masked_loss(y_true, y_pred, ls), rtol=1e-6)
    # The bound class computes the same.
    np.testing.assert_allclose(float(mt.MaskedLoss(label_smoothing=ls)(y_true, y_pred)), loss,
                               rtol=1e-6)


@pytest.mark.parametrize("ls", [0.0, 0.1])
def test_masked_loss_equals_keras_cross_entropy_on_real_tokens(batch, ls):
    y_true, y_pred = batch
    keep = y_true != 0
    keras_loss = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=ls)
    expected = float(keras_loss(np.eye(7)[y_true[keep]], y_pred[keep]))
    np.testing.assert_allclose(float(mt.masked_loss(y_true, y_pred, ls)), expected, rtol=1e-6)


def test_masked_loss_ignores_logits_at_pad_positions(batch, rng):
    y_true, y_pred = batch
    for ls in (0.0, 0.1):
        loss = float(mt.masked_loss(y_true, y_pred, ls))
        changed = y_pred.copy()
        changed[y_true == 0] = rng.normal(scale=50.0, size=changed[y_true == 0].shape)
        assert float(mt.masked_loss(y_true, changed, ls)) == loss


def test_masked_loss_other_pad_id_and_all_pad(batch):
    y_true, y_pred = batch
    np.testing.assert_allclose(float(mt.masked_loss(y_true, y_pred, pad_id=1)),
                               numpy_masked_loss(y_true, y_pred, pad_id=1), rtol=1e-6)
    all_pad = float(mt.masked_loss(np.zeros_like(y_true), y_pred))
    assert all_pad == 0.0  # no token counts: 0 / max(0, 1), never NaN


def test_masked_loss_of_a_certain_prediction():
    # Logits that put everything on the right token: loss ~ 0 without smoothing; with
    # smoothing ls, the minimum is the entropy part -sum(y_smooth * log(y_smooth))-ish, > 0.
    y_true = np.array([[2, 1, 0]])
    y_pred = np.eye(4)[y_true].astype("float32") * 100.0
    assert float(mt.masked_loss(y_true, y_pred)) < 1e-6
    assert float(mt.masked_loss(y_true, y_pred, label_smoothing=0.1)) > 1.0


def test_masked_accuracy_by_hand():
    y_true = np.array([[3, 1, 4, 0, 0], [5, 2, 6, 1, 0]])
    predicted = np.array([[3, 2, 4, 0, 1], [5, 2, 0, 0, 3]])
    # Non-pad tokens: 7; right: (3, 4) in row 0 and (5, 2) in row 1 -> 4 / 7.
    # (The pad positions' predictions, right or wrong, do not count.)
    y_pred = np.eye(7)[predicted].astype("float32")
    assert float(mt.masked_accuracy(y_true, y_pred)) == pytest.approx(4 / 7, rel=1e-6)
    assert float(mt.masked_accuracy(np.zeros_like(y_true), y_pred)) == 0.0


def test_masked_loss_at_a_large_vocabulary_equals_the_one_hot_formula(rng):
    # The decomposition (1 - eps) NLL + eps mean(-log p) against the dense one-hot definition.
    y_true = rng.integers(0, 20000, size=(2, 3))
    y_pred = rng.normal(scale=3.0, size=(2, 3, 20000)).astype("float32")
    np.testing.assert_allclose(float(mt.masked_loss(y_true, y_pred, 0.1)),
                               numpy_masked_loss(y_true, y_pred, 0.1), rtol=1e-5)


def test_masked_accuracy_metric_counts_tokens_across_batches():
    # Batch 1: 1 real token, wrong. Batch 2: 4 real tokens, all right. Token-weighted: 4 / 5;
    # the mean of the two per-batch ratios would be (0 + 1) / 2.
    y1, p1 = np.array([[3, 0, 0, 0]]), np.eye(5)[[[4, 0, 0, 0]]].astype("float32")
    y2, p2 = np.array([[3, 4, 2, 1]]), np.eye(5)[[[3, 4, 2, 1]]].astype("float32")
    metric = mt.MaskedAccuracy()
    metric.update_state(y1, p1)
    metric.update_state(y2, p2)
    assert float(metric.result()) == pytest.approx(4 / 5)
    assert metric.name == "masked_accuracy"
    metric.reset_state()
    assert float(metric.result()) == 0.0
    clone = mt.MaskedAccuracy.from_config(mt.MaskedAccuracy(pad_id=2).get_config())
    assert clone.pad_id == 2 and clone.name == "masked_accuracy"


def test_evaluate_with_masked_accuracy_metric_is_token_weighted(tiny_transformer, rng):
    model = tiny_transformer(num_layers=1)
    model.compile(loss=mt.MaskedLoss(0.1), metrics=[mt.MaskedAccuracy()])
    x, y = toy_data(rng, batch=5)
    y[:4, 2:] = 0  # batches of 2, 2 and 1 sequences with unequal numbers of real tokens
    results = model.evaluate(x, y, batch_size=2, verbose=0, return_dict=True)
    logits = model(x, training=False)
    np.testing.assert_allclose(results["masked_accuracy"], float(mt.masked_accuracy(y, logits)), rtol=1e-6)


def test_maskedloss_config_round_trip():
    loss = mt.MaskedLoss(label_smoothing=0.1, pad_id=3)
    clone = mt.MaskedLoss.from_config(loss.get_config())
    assert (clone.label_smoothing, clone.pad_id) == (0.1, 3)
    restored = keras.losses.deserialize(keras.losses.serialize(loss))
    assert isinstance(restored, mt.MaskedLoss) and restored.label_smoothing == 0.1


# --- training with model.compile / fit ---------------------------------------------------------


def toy_data(rng, batch=4, length=6, vocab=13):
    source = rng.integers(1, vocab, size=(batch, length))
    target = rng.integers(1, vocab, size=(batch, length + 1))
    target[0, -2:] = 0
    source[1, -1] = 0
    return (source, target[:, :-1]), target[:, 1:]


def test_compile_with_masked_loss_and_accuracy_and_the_schedule(tiny_transformer, rng):
    model = tiny_transformer(num_layers=1)
    schedule = mt.TransformerSchedule(16, warmup_steps=100)
    model.compile(optimizer=keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9),
                  loss=mt.masked_loss, metrics=[mt.masked_accuracy])
    x, y = toy_data(rng)
    history = model.fit(x, y, batch_size=2, epochs=1, shuffle=False, verbose=0)
    assert int(model.optimizer.iterations) == 2
    assert np.isfinite(history.history["loss"][0])
    assert 0.0 <= history.history["masked_accuracy"][0] <= 1.0
    # evaluate reports exactly masked_loss on the batch (one batch: no averaging over batches).
    results = model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True)
    logits = model(x, training=False)
    np.testing.assert_allclose(results["loss"], float(mt.masked_loss(y, logits)), rtol=1e-5)
    np.testing.assert_allclose(results["masked_accuracy"], float(mt.masked_accuracy(y, logits)),
                               rtol=1e-6)


def test_loss_decreases_on_one_repeated_batch(tiny_transformer, rng):
    model = tiny_transformer(num_layers=1, dropout=0.0)
    model.compile(optimizer=keras.optimizers.Adam(3e-3), loss=mt.MaskedLoss(label_smoothing=0.1),
                  metrics=[mt.masked_accuracy])
    x, y = toy_data(rng)
    # train_on_batch resets the metrics: each value is the loss of that step alone.
    losses = [model.train_on_batch(x, y, return_dict=True)["loss"] for _ in range(20)]
    assert np.all(np.isfinite(losses))
    assert losses[-1] < 0.8 * losses[0]
    assert np.mean(losses[-5:]) < np.mean(losses[:5])


# --- mixed precision ---------------------------------------------------------------------------


@pytest.mark.float16
def test_mixed_float16_forward_and_train_step(mixed_float16, tiny_transformer, rng):
    model = tiny_transformer(num_layers=1)
    assert model.dtype_policy.name == "mixed_float16"
    x, y = toy_data(rng)
    logits = model(x, training=False)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    assert np.all(np.isfinite(ops.convert_to_numpy(logits)))
    # Weights stay float32; the computation runs in float16.
    assert all(keras.backend.standardize_dtype(v.dtype) == "float32" for v in model.weights)
    assert keras.backend.standardize_dtype(model.encoder.stack[0](
        ops.cast(np.ones((1, 2, 16)), "float16")).dtype) == "float16"
    # Eager: one step needs no graph tracing (the graph path is covered in float32 above).
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=mt.MaskedLoss(0.1),
                  metrics=[mt.masked_accuracy], run_eagerly=True)
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    before = [ops.convert_to_numpy(v) for v in model.trainable_weights]
    loss = model.train_on_batch(x, y, return_dict=True)["loss"]
    assert np.isfinite(loss)
    # The step was applied (finite scaled gradients), not skipped by the loss scaler.
    after = [ops.convert_to_numpy(v) for v in model.trainable_weights]
    assert all(np.all(np.isfinite(a)) for a in after)
    assert sum(not np.array_equal(a, b) for a, b in zip(after, before)) > len(before) // 2


# --- StepLossHistory ---------------------------------------------------------------------------


def test_step_loss_history_recovers_each_batch_loss(tiny_transformer, rng):
    # With a learning rate of 0 the weights never move, so the loss fit reports for each step
    # must equal the loss of that batch computed directly.
    model = tiny_transformer(dropout=0.0)
    source = rng.integers(1, 13, size=(12, 6)).astype("int32")
    target = rng.integers(1, 13, size=(12, 5)).astype("int32")
    target[:, 3:] = 0  # padding, which the loss skips
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss=mt.MaskedLoss(0.1))
    history = mt.StepLossHistory(batch_size=4)
    model.fit((source, target), target, batch_size=4, epochs=2, shuffle=False, callbacks=[history], verbose=0)
    direct = [float(mt.masked_loss(target[i:i + 4], model((source[i:i + 4], target[i:i + 4])), 0.1))
              for i in (0, 4, 8)]
    assert len(history.losses) == 6  # 3 steps per epoch, 2 epochs
    np.testing.assert_allclose(history.losses, direct * 2, rtol=1e-5)
    assert len(set(np.round(direct, 5))) == 3  # three different batches, not one mean repeated
