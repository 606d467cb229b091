"""Appendix A: training under tf.distribute computes what one device computes; the cost formulas.

The strategy runs on two logical CPUs, which TensorFlow can only make before its runtime starts,
so the distributed run happens in a fresh process (tests/mirrored_run.py).
"""

import json
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest

import mintransformer as mt
from mintransformer import distribute
from mintransformer.recipes import distributed

STEPS = 6


@pytest.fixture(scope="module")
def mirrored(tmp_path_factory):
    """What tests/mirrored_run.py found, and the folder it wrote to."""
    out = tmp_path_factory.mktemp("mirrored")
    env = dict(os.environ, MINTRANSFORMER_CPU_DEVICES="2")
    script = pathlib.Path(__file__).with_name("mirrored_run.py")
    done = subprocess.run([sys.executable, str(script), str(out), str(STEPS)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "result.json").read_text()), out


def test_two_logical_cpus_make_two_replicas_with_half_the_batch_each(mirrored):
    result, _ = mirrored
    assert result["devices"] == ["/device:CPU:0", "/device:CPU:1"]
    assert result["replicas"] == 2 and result["steps"] == STEPS
    assert result["rows"] == [distributed.BATCH_SIZE // 2] * 2
    assert result["tokens"][0] != result["tokens"][1]  # ragged: a per-replica mean would be wrong


def test_the_replicas_copies_stay_identical(mirrored):
    assert mirrored[0]["replicas_agree"] is True


def test_summed_replica_gradients_are_the_single_device_gradient(mirrored):
    errors = mirrored[0]["errors"]
    assert errors["masked_loss"] < 1e-5
    # Each replica dividing by its own tokens gives the sum of two means, about twice the gradient.
    assert errors["per_replica_mean"] > 0.5


def test_fit_uses_the_scalar_loss_as_it_is_only_without_a_keras_mask_or_sample_weights(mirrored):
    ratios = mirrored[0]["fit_over_own"]
    # The book's model: no Keras mask on its output, so masked_loss's division by n is the only scaling.
    np.testing.assert_allclose(ratios["reversal"], [1.0, 1.0], rtol=1e-6)
    # With sample weights of 1 (a small model without a Keras mask, compiled with the function mt.masked_loss), or
    # an output that carries a Keras mask, Keras divides the scalar by R = 2.
    np.testing.assert_allclose(ratios["sample_weight"], [0.5, 0.5], rtol=1e-6)
    np.testing.assert_allclose(ratios["keras_mask"], [0.5, 0.5], rtol=1e-5)


def test_mirrored_training_gives_the_single_device_weights_for_a_few_steps(mirrored):
    result, _ = mirrored
    # Rounding, in the order of the sums, amplified a little by Adam (appendix A): about 1e-3 of the
    # change training made, and about 1e-4 at most in one weight, on the CPUs we tried.
    assert result["relative_weight_difference"] < 1e-2
    assert result["max_weight_difference"] < 1e-3
    assert result["max_loss_difference"] < 1e-4


def test_the_mirrored_checkpoint_loads_on_one_device(mirrored):
    _, out = mirrored
    model = distributed.build(mt.distribute.tf.distribute.get_strategy())
    model((np.ones((1, 3), "int32"), np.ones((1, 3), "int32")))
    model.optimizer.build(model.trainable_variables)  # so that Adam's moments load too
    model.load_weights(str(out / "mirrored.weights.h5"))
    assert int(model.optimizer.iterations.numpy()) == STEPS  # training can resume here
    optimizer = np.load(out / "optimizer.npz")
    for i, variable in enumerate(model.optimizer.variables):  # the step count, and Adam's moments
        np.testing.assert_array_equal(variable.numpy(), optimizer[f"arr_{i}"], err_msg=variable.path)
    saved = np.load(out / "weights.npz")
    for i, weight in enumerate(model.weights):
        np.testing.assert_array_equal(weight.numpy(), saved[f"arr_{i}"], err_msg=weight.path)


def test_splitting_the_cpu_after_tensorflow_started_says_how_to_do_it():
    with pytest.raises(RuntimeError, match="MINTRANSFORMER_CPU_DEVICES.*before `import mintransformer`"):
        distribute.split_cpu(2)
    with pytest.raises(RuntimeError, match="Restart the kernel.*MINTRANSFORMER_CPU_DEVICES"):
        distribute.logical_cpus(2)  # this process imported the package without the variable
    assert distribute.logical_cpus(1) == ["/device:CPU:0"]


def test_importing_the_package_with_the_variable_after_tensorflow_started_raises_at_the_import():
    # Appendix A says so: the import itself raises split_cpu's error, before logical_cpus could be called.
    code = ("import os, tensorflow as tf; tf.constant(0.0); "
            "os.environ['MINTRANSFORMER_CPU_DEVICES'] = '2'; import mintransformer")
    env = {k: v for k, v in os.environ.items() if k != "MINTRANSFORMER_CPU_DEVICES"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "RuntimeError: TensorFlow has started already and cannot split the CPU into 2 devices" in done.stderr


@pytest.mark.parametrize("config", [
    dict(num_layers=2, d_model=64, num_heads=4, dff=256, input_vocab_size=100, target_vocab_size=100, share=True),
    dict(num_layers=1, d_model=48, num_heads=3, dff=40, input_vocab_size=30, target_vocab_size=70, share=False),
], ids=["tied", "untied"])
def test_forward_flops_are_the_products_of_the_traced_graph(config):
    share = config.pop("share")
    model = mt.MinTransformer(**config, max_length=32, dropout=0.0, share_embeddings=share)
    batch, source_length, target_length = 3, 11, 7
    inputs = (np.ones((batch, source_length), "int32"), np.ones((batch, target_length), "int32"))
    parts = distribute.forward_flops(config["num_layers"], config["d_model"], config["dff"],
                                     config["target_vocab_size"], batch * source_length, batch * target_length,
                                     source_length, target_length)
    assert distribute.count_products(model, inputs) == sum(parts.values())
    assert distribute.training_flops(config["num_layers"], config["d_model"], config["dff"],
                                     config["target_vocab_size"], batch * source_length, batch * target_length,
                                     source_length, target_length) == 3 * sum(parts.values())


def test_the_paper_base_model_count_is_below_the_papers_gpu_budget():
    # Table 2: 3.3e18 = 12 hours x 8 P100s x 9.5 TFLOPS; our count of the products is about 30% of it.
    count = 100_000 * distribute.training_flops(6, 512, 2048, 37_000, 25_000, 25_000, 25, 25)
    assert 12 * 3600 * 8 * 9.5e12 == pytest.approx(3.3e18, rel=0.01)
    assert 0.25 < count / (12 * 3600 * 8 * 9.5e12) < 0.35


def test_precision_rates_times_four_settings():
    x = (np.full((4, 6), 3, "int32"), np.full((4, 5), 3, "int32"))
    y = np.full((4, 5), 4, "int32")
    build = lambda: mt.MinTransformer(1, 16, 2, 32, 10, 10, max_length=8, dropout=0.0)  # noqa: E731
    rates = distribute.precision_rates(build, x, y, steps=1)
    assert set(rates) == {(p, j) for p in ("float32", "mixed_float16") for j in (False, True)}
    assert all(rate > 0 for rate in rates.values())
    import keras
    assert keras.config.dtype_policy().name == "float32"  # restored


def _tiny_model():
    keras.utils.set_random_seed(0)
    model = mt.MinTransformer(1, 16, 2, 32, 12, 12, max_length=12, dropout=0.0)
    model((np.ones((1, 3), "int32"), np.ones((1, 3), "int32")))
    return model


def _micro_batch(rng, rows, length, real):
    """``rows`` pairs padded to ``length``, with ``real`` non-pad target tokens in each row."""
    source = rng.integers(3, 12, (rows, length)).astype("int32")
    target = np.zeros((rows, length + 1), "int32")
    target[:, :real + 1] = rng.integers(3, 12, (rows, real + 1))
    return (source, target[:, :-1]), target[:, 1:]


def _flat(arrays):
    return np.concatenate([np.ravel(a) for a in arrays])


@pytest.mark.parametrize("reals", [(2, 7), (5, 5)], ids=["unequal_tokens", "equal_tokens"])
def test_keras_gradient_accumulation_applies_the_mean_of_the_micro_batch_means(reals):
    rng = np.random.default_rng(0)
    model = _tiny_model()
    micro_batches = [_micro_batch(rng, 3, 8, real) for real in reals]
    applied = _flat(distribute.keras_accumulated_gradient(model, micro_batches, mt.masked_loss))
    means = [_flat(distribute.gradients(model, mt.masked_loss, x, y)) for x, y in micro_batches]
    whole_inputs = tuple(np.concatenate([x[i] for x, _ in micro_batches]) for i in range(2))
    whole = _flat(distribute.gradients(model, mt.masked_loss, whole_inputs,
                                       np.concatenate([y for _, y in micro_batches])))
    np.testing.assert_allclose(applied, np.mean(means, axis=0), rtol=1e-4, atol=1e-6)
    distance = np.linalg.norm(applied - whole) / np.linalg.norm(whole)
    if reals[0] == reals[1]:
        assert distance < 1e-4  # the same tokens in every micro-batch: the mean of means is the mean
    else:
        assert distance > 0.05  # otherwise it is not the gradient of the large batch


def test_keras_gradient_accumulation_needs_two_micro_batches():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="at least 2 micro-batches"):
        distribute.keras_accumulated_gradient(_tiny_model(), [_micro_batch(rng, 2, 4, 3)], mt.masked_loss)


def test_keras_gradient_accumulation_schedule_counts_micro_batches():
    schedule = mt.TransformerSchedule(d_model=512, warmup_steps=4000)
    optimizer = keras.optimizers.Adam(schedule, gradient_accumulation_steps=4)
    weight = keras.Variable(np.zeros(3, "float32"))
    for _ in range(8):
        optimizer.apply_gradients([(np.ones(3, "float32"), weight)])
    assert int(optimizer.iterations) == 2
    assert float(optimizer.learning_rate) == pytest.approx(float(schedule(8)))


def test_replica_losses_needs_a_compiled_loss():
    model = _tiny_model()
    with pytest.raises(ValueError, match="compiled with a loss"):
        distribute.replica_losses(mt.distribute.tf.distribute.get_strategy(), model,
                                  (np.ones((2, 3), "int32"), np.ones((2, 3), "int32")), np.ones((2, 3), "int32"))
