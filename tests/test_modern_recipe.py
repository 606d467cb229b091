"""Chapter 13's experiment: the variants, the runner, the comparisons and the shipped results."""

import json
import math
import pathlib
import subprocess
import sys

import mintransformer as mt  # noqa: F401  (first: it silences TensorFlow's start-up log)

import numpy as np
import pytest
from mintransformer.recipes import addition, modern

ROOT = pathlib.Path(__file__).resolve().parents[1]
ADDITION = [n for n, (task, _, _) in modern.VARIANTS.items() if task == "addition"]
REVERSAL = [n for n, (task, _, _) in modern.VARIANTS.items() if task == "reversal"]


@pytest.mark.parametrize("name", list(modern.VARIANTS))
def test_every_variant_builds_and_scores(name):
    # Training is covered by test_run_returns_every_score (one variant per task) and the script's test:
    # each switch itself is checked in tests/test_modern.py and tests/test_contract.py.
    model, tokenizer, train, test, long = modern.build(name, seed=0, eval_limit=8)
    assert modern.cross_entropy(model, tokenizer, test) > 0  # builds the model
    assert model.count_params() == modern.parameters(name)  # the formula counts the built model
    assert len(test) == 8 and len(long) == (8 if name in REVERSAL else 0)
    for pairs in (test, long) if long else (test,):
        assert 0 < modern.cross_entropy(model, tokenizer, pairs) < 10


@pytest.mark.parametrize("name", ["modern", "reversal_rotary"])
def test_run_returns_every_score(name):
    result = modern.run(name, seed=0, steps=3, loss_every=1, eval_limit=3)
    assert (result["name"], result["seed"], result["steps"], len(result["losses"])) == (name, 0, 3, 3)
    assert result["parameters"] == modern.parameters(name) and result["seconds"] > 0
    assert result["held_out"] == 3 and 0 <= result["exact"] <= result["letters"] <= 1
    assert math.isfinite(result["cross_entropy"]) and np.isfinite(result["losses"]).all()
    if name in REVERSAL:
        assert result["held_out_long"] == 3 and 0 <= result["exact_long"] <= result["letters_long"] <= 1
        assert math.isfinite(result["cross_entropy_long"])
    else:
        assert "exact_long" not in result


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="unknown variant 'llama'"):
        modern.run("llama", 0)
    with pytest.raises(ValueError, match="steps=0"):
        modern.run("paper", 0, steps=0)
    with pytest.raises(ValueError, match="eval_limit=0"):
        modern.run("paper", 0, steps=1, eval_limit=0)


def test_each_variant_changes_what_it_says_from_the_paper_block():
    paper = modern.config("paper")
    assert {k: paper[k] for k in modern.PAPER} == modern.PAPER and paper["dropout"] == 0.0
    assert (paper["norm_first"], paper["positions"], paper["activation"]) == (False, "sinusoidal", "relu")
    expected = dict(pre_norm={"norm_first"}, rms_norm={"norm"}, rope={"positions"}, swiglu={"activation", "dff"},
                    gqa={"num_key_value_heads", "dff"}, no_bias={"use_bias"},
                    reversal_sinusoidal=set(), reversal_learned={"positions"}, reversal_rotary={"positions"})
    for name, keys in expected.items():
        settings = modern.config(name)
        assert {k for k in settings if settings[k] != paper.get(k)} == keys, name
    llama = modern.config("modern")
    assert {k: llama[k] for k in mt.LLAMA_STYLE if k != "pad_id"} == {
        k: v for k, v in mt.LLAMA_STYLE.items() if k != "pad_id"}
    assert llama["pad_id"] == 0 and llama["num_key_value_heads"] == 2  # the loss masks the pad id


def test_parameter_counts_match_the_paper_block():
    counts = {name: modern.parameters(name) for name in modern.VARIANTS}
    assert counts["paper"] == 100_928
    # SwiGLU's width is about 2/3 of 256, grouped-query attention's FFN is widened to give back
    # what W^K and W^V lose (Llama 2's choice), and the modern block's width matches the whole.
    assert (modern.config("swiglu")["dff"], modern.config("gqa")["dff"], modern.config("modern")["dff"]) == (
        170, 288, 193)
    for name in ("swiglu", "gqa", "modern", "rope"):
        assert abs(counts[name] / counts["paper"] - 1) < 0.001, name
    for name in ADDITION:  # the rest differ by their norms' and biases' few weights
        assert abs(counts[name] / counts["paper"] - 1) < 0.02, name
    assert counts["no_bias"] - counts["paper"] == -1152
    # Reversal: only the learned table adds weights, one row of d_model per position.
    assert counts["reversal_learned"] - counts["reversal_rotary"] == modern.REVERSAL_CONTEXT * 64
    assert counts["reversal_sinusoidal"] == counts["reversal_rotary"]


def test_reversal_as_text_keeps_the_long_strings_out_of_training():
    tokenizer, train, test, long = modern.reversal_task()
    low, high = modern.REVERSAL_TRAIN_LENGTHS
    assert all(p.endswith("=") and a == p[:-1][::-1] for p, a in train[:200] + test[:200] + long[:200])
    assert all(low <= len(a) <= high for _, a in train + test) and all(len(a) > high for _, a in long)
    assert not {p for p, _ in train} & ({p for p, _ in test} | {p for p, _ in long})
    # The longest text read (prompt and answer; the last letter predicts <end>) fits the context.
    assert max(len(p) + len(a) for p, a in long) == modern.REVERSAL_CONTEXT == 27
    assert max(len(p) + len(a) for p, a in train) == modern.REVERSAL_TRAINED_CONTEXT == 21
    assert tokenizer.encode("ab=") == [4, 5, 3]  # "=" sorts before the letters
    assert addition.task()[0].vocab_size == 15


def test_the_script_writes_and_merges_the_results_file(tmp_path):
    out = tmp_path / "tiny.json"
    script = [sys.executable, str(ROOT / "scripts" / "run_modern.py"), "--steps", "2", "--eval-limit", "2",
              "--out", str(out)]
    printed = subprocess.run(script + ["--variants", "paper", "--seeds", "2", "--workers", "1"], check=True,
                             capture_output=True, text=True, timeout=600).stdout
    assert "2 runs of 1 variants" in printed
    subprocess.run(script + ["--variants", "rope", "--seeds", "1", "--first-seed", "1", "--workers", "1"],
                   check=True, capture_output=True, timeout=600)
    results = json.loads(out.read_text())
    assert [(r["name"], r["seed"], r["steps"], r["held_out"]) for r in results["runs"]] == [
        ("paper", 0, 2, 2), ("paper", 1, 2, 2), ("rope", 1, 2, 2)]
    assert [(m["variants"], m["first_seed"], m["seeds"], m["eval_limit"]) for m in results["made"]] == [
        (["paper"], 0, 2, 2), (["rope"], 1, 1, 2)]
    assert results["summary"] == json.loads(json.dumps(modern.summarize(results["runs"])))
    with pytest.raises(ValueError, match="share 1 seed"):  # one shared seed is not a pair
        modern.compare_all(results["runs"], [("rope", "paper", "exact")])


def _runs(*triples):
    return [dict(name=n, seed=s, exact=x, cross_entropy=1 - x) for n, s, x in triples]


def test_paired_and_compare_all_pair_by_seed_and_adjust_for_the_family():
    runs = _runs(*[("paper", s, x) for s, x in enumerate([0.5, 0.9, 0.6, 0.8])],
                 *[("rope", s, x) for s, x in enumerate([0.55, 0.94, 0.65, 0.86])],
                 *[("gqa", s, x) for s, x in [(3, 0.8), (0, 0.5), (1, 0.9)]])
    seeds, a, b = modern.paired(runs, "gqa", "paper")
    assert seeds == [0, 1, 3] and a.tolist() == [0.5, 0.9, 0.8] and b.tolist() == [0.5, 0.9, 0.8]
    with pytest.raises(ValueError, match="no run of 'swiglu'"):
        modern.paired(runs, "swiglu", "paper")
    with pytest.raises(ValueError, match="share 1 seed"):
        modern.paired(runs[:4] + runs[-1:], "gqa", "paper")
    triples = [("rope", "paper", "exact"), ("rope", "paper", "cross_entropy"), ("gqa", "paper", "exact")]
    compared = modern.compare_all(runs, triples)
    assert list(compared) == triples
    one = compared[triples[0]]
    assert one["test"].mean == pytest.approx(0.05) and one["sign"] == 0.125 and one["seeds"] == [0, 1, 2, 3]
    assert compared[triples[1]]["test"].mean == pytest.approx(-0.05)  # lower cross-entropy: negative
    assert compared[triples[2]]["test"].p == 1.0 and compared[triples[2]]["holm"] == 1.0
    ps = sorted(r["test"].p for r in compared.values())
    assert one["holm"] == pytest.approx(min(1, 3 * ps[0]))


def test_the_chapter_compares_every_variant_with_its_reference():
    assert len(modern.COMPARISONS) == len(set(modern.COMPARISONS)) == 18
    assert {a for a, b, _ in modern.COMPARISONS if b == "paper"} == set(ADDITION) - {"paper"}
    assert [c for c in modern.COMPARISONS if c[0] == "reversal_rotary"] == [
        ("reversal_rotary", other, key) for other in ("reversal_sinusoidal", "reversal_learned")
        for key in ("exact_long", "cross_entropy_long")]
    for a, b, _ in modern.COMPARISONS:
        assert modern.VARIANTS[a][0] == modern.VARIANTS[b][0]


def test_the_shipped_results_cover_the_grid_and_agree_with_their_runs():
    results = modern.load_results()
    counts = {}
    for run in results["runs"]:
        counts[run["name"]] = counts.get(run["name"], 0) + 1
        assert run["parameters"] == modern.parameters(run["name"])
        assert {"seed", "steps", "seconds", "exact", "cross_entropy", "losses", "held_out"} <= set(run)
        assert ("exact_long" in run) == (run["name"] in REVERSAL)
    assert set(counts) == set(modern.VARIANTS) and min(counts.values()) >= 2
    budgets = {k: json.loads(json.dumps(v)) for k, v in
               dict(addition=modern.BUDGET, reversal=modern.REVERSAL_BUDGET).items()}
    assert results["budget"] == budgets
    assert results["summary"] == json.loads(json.dumps(modern.summarize(results["runs"])))
    assert all(m["wall_seconds"] > 0 and m["processor"] and m["workers"] >= 1 for m in results["made"])
    compared = modern.compare_all(results["runs"])
    assert len(compared) == 18 and all(len(r["seeds"]) >= 2 for r in compared.values())
    assert all(r["holm"] >= r["test"].p and 0 <= r["sign"] <= 1 for r in compared.values())
    assert np.isfinite([r["test"].mean for r in compared.values()]).all()
