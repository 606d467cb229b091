"""The training recipes of chapter 8 and the pretrained date model that chapter 9 loads."""

import mintransformer as mt  # noqa: F401  (first: it silences TensorFlow's start-up log)

import keras
import numpy as np
import pytest
from mintransformer import data, recipes


@pytest.mark.parametrize("name", sorted(recipes.TASKS))
def test_every_task_has_a_complete_recipe(name):
    task = recipes.TASKS[name]
    assert {"alphabet", "pairs", "model", "output_length", "warmup_steps", "cooldown_epochs", "epochs",
            "batch_size", "average_last"} <= set(task)
    assert 1 <= task["average_last"] <= task["epochs"]
    assert 0 <= task["cooldown_epochs"] < task["epochs"]
    tokenizer, (train, validation, test) = recipes.task_data(name)
    longest_target = max(len(t) for _, t in train + validation + test)
    assert task["output_length"] >= longest_target + 1  # room for every target and its <end>
    assert task["model"]["max_length"] >= max(len(s) for s, _ in train + validation + test)


def test_compile_model_is_the_papers_set_up():
    tokenizer, _ = recipes.task_data("dates")
    model = recipes.compile_model(recipes.build_model("dates", tokenizer), warmup_steps=123)
    optimizer = model.optimizer
    assert (optimizer.beta_1, optimizer.beta_2, optimizer.epsilon) == (0.9, 0.98, 1e-9)
    schedule = keras.optimizers.schedules.deserialize(optimizer.get_config()["learning_rate"])
    assert isinstance(schedule, mt.TransformerSchedule)
    assert (schedule.d_model, schedule.warmup_steps) == (model.d_model, 123)
    assert model.loss.label_smoothing == 0.1 and model.loss.pad_id == tokenizer.pad_id
    assert model.share_embeddings  # one character vocabulary for source and target


@pytest.mark.parametrize("suffix", [".weights.h5", ".keras"])
def test_average_checkpoints_is_the_elementwise_mean(tmp_path, tiny_transformer, suffix):
    model = tiny_transformer(dropout=0.0)
    source = np.array([[3, 4, 5, 0]], "int32")
    model((source, source))
    model.compile(optimizer="adam", loss="mse")  # a .keras file wants a compiled model
    rng = np.random.default_rng(0)
    snapshots, paths = [], []
    for i in range(3):
        values = [rng.normal(size=v.shape).astype("float32") for v in model.trainable_variables]
        for variable, value in zip(model.trainable_variables, values):
            variable.assign(value)
        path = str(tmp_path / f"epoch-{i}{suffix}")
        model.save_weights(path) if suffix == ".weights.h5" else model.save(path)
        snapshots.append(values)
        paths.append(path)
    recipes.average_checkpoints(model, paths[1:])  # the last two
    for j, variable in enumerate(model.trainable_variables):
        expected = (snapshots[1][j] + snapshots[2][j]) / 2
        np.testing.assert_allclose(keras.ops.convert_to_numpy(variable), expected, rtol=1e-6, atol=1e-7)


def test_the_pretrained_date_model_meets_its_target_on_the_test_split():
    model, tokenizer = recipes.load_pretrained_date_model()
    _, (_, _, test) = recipes.task_data("dates")
    output_length = recipes.TASKS["dates"]["output_length"]
    predictions = recipes.translate(model, tokenizer, [s for s, _ in test], output_length)
    exact = np.mean([p == t for p, (_, t) in zip(predictions, test)])
    assert exact >= 0.99, exact
    assert recipes.exact_match(model, tokenizer, test[:300], output_length) == pytest.approx(
        np.mean([p == t for p, (_, t) in zip(predictions[:300], test[:300])]))
    beam = recipes.translate(model, tokenizer, [s for s, _ in test[:200]], output_length,
                             decoder=mt.beam_search, beam_size=4, alpha=0.6)
    assert np.mean([p == t for p, (_, t) in zip(beam, test[:200])]) >= 0.99
    assert data.CharTokenizer(data.DATE_ALPHABET).vocab_size == tokenizer.vocab_size
