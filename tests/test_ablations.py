"""Chapter 11: the switches its ablations flip, the runner, the script and the shipped results."""

import json
import pathlib
import subprocess
import sys

import mintransformer as mt  # noqa: F401  (first: it silences TensorFlow's start-up log)

import keras
import numpy as np
import pytest
from keras import ops
from mintransformer.recipes import ablations

ROOT = pathlib.Path(__file__).resolve().parents[1]
START, END = 1, 2
OPTIONS = {
    "key_dim=2": dict(key_dim=2),
    "learned positions": dict(positions="learned"),
    "no positions": dict(positions="none"),
    "unscaled attention": dict(scale_attention=False),
    "unscaled embeddings": dict(scale_embeddings=False),
}


def small_model(**options):
    keras.utils.set_random_seed(0)
    model = mt.MinTransformer(2, 16, 4, 32, 23, 23, 40, dropout=0.1, share_embeddings=True, **options)
    model((np.ones((1, 3), "int32"), np.ones((1, 2), "int32")))
    return model


@pytest.fixture(scope="module")
def source():
    tokens = np.random.RandomState(1).randint(3, 23, size=(3, 7)).astype("int32")
    tokens[1, 4:] = 0  # padding
    return tokens


@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
def test_every_option_decodes_alike_with_and_without_the_cache(options, source):
    model = small_model(**options)
    target = np.random.RandomState(2).randint(3, 23, size=(3, 6)).astype("int32")
    target[:, 0] = START
    full = model((source, target), training=False).numpy()
    caches = model.start_cache(source, max_length=10)
    for t in range(target.shape[1]):
        logits, caches = model.decode_step(target[:, t:t + 1], t, caches, source)
        np.testing.assert_allclose(logits.numpy(), full[:, t], atol=1e-4)
    cached = mt.greedy_decode(model, source, START, END, max_length=12, use_cache=True)
    uncached = mt.greedy_decode(model, source, START, END, max_length=12, use_cache=False)
    np.testing.assert_array_equal(cached, uncached)


@pytest.mark.parametrize("options", OPTIONS.values(), ids=OPTIONS.keys())
def test_every_option_survives_a_config_round_trip(options, source):
    model = small_model(**options)
    copy = mt.MinTransformer.from_config(model.get_config())
    copy((np.ones((1, 3), "int32"), np.ones((1, 2), "int32")))
    copy.set_weights(model.get_weights())
    target = source[:, :4]
    np.testing.assert_allclose(copy((source, target)).numpy(), model((source, target)).numpy(), atol=1e-6)
    for key, value in options.items():
        assert copy.get_config()[key] == value


def test_key_dim_narrows_queries_and_keys_but_not_values():
    attention = small_model(key_dim=2).encoder.stack[0].self_attention
    assert attention.wq.kernel.shape == attention.wk.kernel.shape == (16, 4 * 2)
    assert attention.wv.kernel.shape == (16, 16) and (attention.d_k, attention.d_v) == (2, 4)


def test_the_default_model_has_no_extra_weights():
    # The shipped date model's weight file must still load: the switches add nothing by default.
    assert not any("position_embedding" in v.path for v in small_model().weights)
    learned = small_model(positions="learned")
    table = [v for v in learned.trainable_weights if "position_embedding" in v.path]
    assert len(table) == 1 and tuple(table[0].shape) == (40, 16)  # shared by source and target


def test_without_positions_the_encoder_is_blind_to_order(source):
    model = small_model(positions="none")
    tokens = source[:1]
    order = np.array([3, 0, 6, 1, 5, 2, 4])
    encoded = model.encode(tokens).numpy()[0]
    shuffled = model.encode(tokens[:, order]).numpy()[0]
    np.testing.assert_allclose(shuffled, encoded[order], atol=1e-5)  # same vectors, permuted
    with_positions = small_model()
    assert not np.allclose(with_positions.encode(tokens[:, order]).numpy()[0],
                           with_positions.encode(tokens).numpy()[0][order], atol=1e-3)


def test_unscaled_attention_is_softmax_of_plain_dot_products():
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(2, 5, 8)).astype("float32") for _ in range(3))
    out, weights = mt.scaled_dot_product_attention(q, k, v, scale=1.0)
    logits = q @ k.transpose(0, 2, 1)
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(ops.convert_to_numpy(weights), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ops.convert_to_numpy(out), expected @ v, rtol=1e-5, atol=1e-5)


def test_the_schedule_without_warmup_holds_the_peak_then_decays_alike():
    with_warmup = mt.TransformerSchedule(64, warmup_steps=100)
    without = mt.TransformerSchedule(64, warmup_steps=100, warmup=False)
    peak = float(with_warmup(100))
    np.testing.assert_allclose(peak, (64 * 100) ** -0.5, rtol=1e-6)
    for step in (0, 1, 50, 99):
        np.testing.assert_allclose(float(without(step)), peak, rtol=1e-6)
        assert float(with_warmup(step)) < peak
    for step in (100, 101, 500, 10_000):
        np.testing.assert_allclose(float(without(step)), float(with_warmup(step)), rtol=1e-6)
    assert keras.optimizers.schedules.deserialize(
        keras.optimizers.schedules.serialize(without)).warmup is False


def test_each_variant_changes_what_it_says_and_nothing_else():
    base = ablations.config("base")
    assert base == {**ablations.BASE, "model": ablations.BASE["model"]}
    for name, (row, label, changes) in ablations.VARIANTS.items():
        settings = ablations.config(name)
        changed = {k for k in settings if k != "model" and settings[k] != base[k]}
        assert changed == {k for k in changes if k != "model"} - {k for k in changes if changes[k] == base.get(k)}
        changed_model = {k for k in settings["model"] if settings["model"][k] != base["model"].get(k)}
        changed_model |= set(settings["model"]) - set(base["model"])
        assert changed_model == set(changes.get("model", {})), name
        assert row in ablations.ROWS and label


def test_reversal_splits_keep_the_long_strings_out_of_training():
    tokenizer, train, test, long = ablations.task_splits("reversal")
    low, high = ablations.REVERSAL_TRAIN_LENGTHS
    assert all(low <= len(s) <= high for s, _ in train + test)
    assert long and all(len(s) > high for s, _ in long)
    assert not {s for s, _ in train} & {s for s, _ in test}
    assert all(t == s[::-1] for s, t in train[:100] + long[:100])


def test_the_script_runs_the_grid_on_a_tiny_budget(tmp_path):
    out = tmp_path / "tiny.json"
    script = [sys.executable, str(ROOT / "scripts" / "run_ablations.py"), "--steps", "3", "--eval-limit", "20",
              "--out", str(out)]
    printed = subprocess.run(script + ["--variants", "average", "reversal_none", "--seeds", "1", "--first-seed", "4",
                                       "--workers", "2"], check=True, capture_output=True, text=True, timeout=600).stdout
    assert "2 runs of 2 variants" in printed
    results = json.loads(out.read_text())
    assert sorted((r["name"], r["seed"]) for r in results["runs"]) == [("average", 4), ("reversal_none", 4)]
    assert all(r["steps"] == 3 and 0 <= r["exact"] <= 1 and r["perplexity"] > 1 for r in results["runs"])
    assert "exact_long" in results["summary"]["reversal_none"]
    # A second call for one variant: seed 4 run again replaces its run, seed 3 is added, the other
    # variant's runs and the first call's record stay. (Two calls, not three: each starts TensorFlow.)
    subprocess.run(script + ["--variants", "average", "--seeds", "2", "--first-seed", "3", "--workers", "1"],
                   check=True, capture_output=True, timeout=600)
    added = json.loads(out.read_text())
    assert sorted((r["name"], r["seed"]) for r in added["runs"]) == [("average", 3), ("average", 4),
                                                                      ("reversal_none", 4)]
    assert [(m["variants"], m.get("first_seed", 0), m["seeds"]) for m in added["made"]] == [
        (["average", "reversal_none"], 4, 1), (["average"], 3, 2)]
    stats = added["summary"]["average"]
    assert stats["seeds"] == 2 and stats["exact"]["min"] <= stats["exact"]["mean"] <= stats["exact"]["max"]
    assert all(m["eval_limit"] == 20 for m in added["made"])  # a smoke test's file says so


def _runs(*triples):
    return [dict(name=n, seed=s, exact=x, perplexity=1 + x) for n, s, x in triples]


def test_paired_matches_runs_by_seed():
    runs = _runs(("base", 2, 0.5), ("base", 0, 0.7), ("base", 1, 0.6), ("heads_1", 1, 0.55), ("heads_1", 0, 0.65))
    seeds, a, b = ablations.paired(runs, "heads_1", "base")
    assert seeds == [0, 1] and a.tolist() == [0.65, 0.55] and b.tolist() == [0.7, 0.6]
    with pytest.raises(ValueError, match="share 1 seed"):
        ablations.paired(runs[:3] + runs[4:], "heads_1", "base")
    with pytest.raises(ValueError, match="no run of 'heads_2'"):
        ablations.paired(runs, "heads_2", "base")
    with pytest.raises(ValueError, match="has the score 'exact_long'"):
        ablations.paired(runs, "heads_1", "base", "exact_long")


def test_compare_all_tests_pairs_and_adjusts_for_the_family():
    runs = _runs(*[("base", s, x) for s, x in enumerate([0.5, 0.9, 0.6, 0.8])],
                 *[("heads_1", s, x) for s, x in enumerate([0.45, 0.86, 0.55, 0.74])],
                 *[("heads_2", s, x) for s, x in enumerate([0.9, 0.5, 0.6, 0.8])])
    triples = [("heads_1", "base", "exact"), ("heads_2", "base", "exact"), ("heads_1", "base", "perplexity")]
    compared = ablations.compare_all(runs, triples)
    assert list(compared) == triples
    one = compared[triples[0]]
    assert one["seeds"] == [0, 1, 2, 3] and one["test"].mean == pytest.approx(-0.05) and one["sign"] == 0.125
    assert one["test"].p < 0.05 and one["holm"] == pytest.approx(min(1, 3 * one["test"].p))
    assert compared[triples[1]]["test"].mean == pytest.approx(0.0)
    ratio = compared[triples[2]]["test"].mean  # perplexities compared on the log scale
    assert ratio == pytest.approx(np.mean(np.log([1.45, 1.86, 1.55, 1.74]) - np.log([1.5, 1.9, 1.6, 1.8])))
    assert all(r["holm"] >= r["test"].p for r in compared.values())


def test_the_chapter_compares_every_variant_with_a_reference_of_its_kind():
    compared = {a for a, _, _ in ablations.COMPARISONS}
    assert compared == set(ablations.VARIANTS) - {"base", "reversal_sinusoidal", "post_norm_warmup"}
    assert len(ablations.COMPARISONS) == len(set(ablations.COMPARISONS)) == 38
    for a, b, key in ablations.COMPARISONS:
        assert ablations.config(a)["task"] == ablations.config(b)["task"]
        assert ablations.config(a)["model"]["num_layers"] == ablations.config(b)["model"]["num_layers"]


def test_the_shipped_pairs_share_their_training():
    # `average` is the base run, averaged afterwards, and the cool-down is the base run until its rate
    # falls: their stored training losses must agree, or the runs of one seed are not pairs.
    runs = ablations.load_results()["runs"]
    losses = {(r["name"], r["seed"]): r["losses"] for r in runs}
    kept = int(ablations.BASE["steps"] * (1 - ablations.config("cooldown")["cooldown_fraction"])) // 10
    for (name, seed), curve in losses.items():
        if name == "average":
            assert curve == losses["base", seed], seed
        if name == "cooldown_average":
            assert curve == losses["cooldown", seed], seed
        if name == "cooldown":
            assert curve[:kept] == losses["base", seed][:kept], seed
    compared = ablations.compare_all(runs)
    assert all(len(r["seeds"]) >= 3 for r in compared.values())


def test_the_shipped_results_cover_the_grid_and_agree_with_their_runs():
    results = ablations.load_results()
    counts = {}
    for run in results["runs"]:
        counts[run["name"]] = counts.get(run["name"], 0) + 1
        assert run["steps"] == ablations.BASE["steps"]
    assert set(counts) == set(ablations.VARIANTS) and min(counts.values()) >= 3
    assert results["base"] == json.loads(json.dumps(ablations.BASE))
    assert results["summary"] == json.loads(json.dumps(ablations.summarize(results["runs"])))
    assert all(m["wall_seconds"] > 0 and m["processor"] for m in results["made"])
