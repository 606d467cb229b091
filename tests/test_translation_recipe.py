"""The shipped Spanish-English model (scripts/train_translation_model.py) and its recipe."""

import importlib.resources

import numpy as np
import pytest

from mintransformer.translation import bpe, corpus, evaluation, recipe


@pytest.fixture(scope="module")
def shipped():
    return recipe.load_pretrained_translation_model()


def test_one_matrix_for_both_embeddings_and_the_output_projection():
    model = recipe.build_translation_model(500, num_layers=1, d_model=32, dff=64, num_heads=2)
    vocabulary_sized = [v for v in model.weights if v.shape[0] == 500 and len(v.shape) == 2]
    assert len(vocabulary_sized) == 1  # shared source/target embedding, also the output projection


def test_the_shipped_files_fit_the_limits():
    folder = importlib.resources.files("mintransformer") / "pretrained"
    with importlib.resources.as_file(folder / recipe.WEIGHTS) as path:
        size = path.stat().st_size
    assert size < 32 * 2**20, size


def test_the_shipped_tokenizer_is_the_one_the_script_learns(shipped):
    _, tokenizer, record = shipped
    train, _, _ = corpus.split_by_book(corpus.bible_verses())
    again = bpe.learn_bpe([v.spanish for v in train] + [v.english for v in train], recipe.TRANSLATION["vocab_size"])
    assert again.merges == tokenizer.merges and again.id_to_token == tokenizer.id_to_token
    assert record["settings"] == recipe.TRANSLATION


def test_the_record_says_how_the_model_was_made(shipped):
    model, _, record = shipped
    for key in ("date", "machine", "python", "tensorflow", "keras", "epochs", "train_seconds", "loss", "val_loss",
                "test_bleu_greedy_last_epoch", "test_bleu_greedy_averaged"):
        assert key in record, key
    assert record["parameters"] == model.count_params()
    assert record["train_seconds"] < 2 * 3600  # the budget: two hours on 2 cores
    assert len(record["loss"]) == record["epochs"] and record["loss"][-1] < record["loss"][0]


def test_the_shipped_model_translates(shipped):
    model, tokenizer, _ = shipped
    _, _, test = corpus.split_by_book(corpus.bible_verses())
    sample = test[:8]
    outputs = evaluation.translate(model, tokenizer, [v.spanish for v in sample], 160)
    assert all(isinstance(o, str) and o.strip() for o in outputs)
    score = evaluation.bleu(outputs, [v.english for v in sample]).score
    assert score > 5, (score, outputs)
    assert np.isfinite(score)


def test_the_shipped_evaluation_holds_the_outputs_its_scores_come_from():
    """scripts/evaluate_translation_model.py: every score recomputes from the stored outputs, alpha
    was chosen on the development book, and the test books were decoded whole."""
    record = recipe.load_translation_evaluation()
    _, dev, test = corpus.split_by_book(corpus.bible_verses())
    references = [v.english for v in test]
    assert record["test_verses"] == len(test) and record["test_every"] == 1
    assert record["development_verses"] == len(dev[::record["development_every"]])
    best = max(record["development"].items(), key=lambda item: item[1]["bleu"])[0]
    assert float(best) == record["chosen_alpha"]
    assert set(record["outputs"]) == set(record["test"]) >= {"greedy", f"beam4_alpha{record['chosen_alpha']}"}
    for system, outputs in record["outputs"].items():
        assert len(outputs) == len(test)
        assert round(evaluation.bleu(outputs, references).score, 2) == record["test"][system]["bleu"]
        assert round(evaluation.chrf(outputs, references).score, 2) == record["test"][system]["chrf"]
    for key in ("machine", "python", "tensorflow", "keras", "sacrebleu", "bleu_signature", "total_seconds"):
        assert key in record, key


def test_the_shipped_evaluation_is_what_the_model_decodes(shipped):
    """A few test verses decoded again, greedily and with the chosen beam, give the stored outputs."""
    model, tokenizer, _ = shipped
    record = recipe.load_translation_evaluation()
    _, _, test = corpus.split_by_book(corpus.bible_verses())
    picked = list(range(0, len(test), 240))  # 4 verses
    sources = [test[i].spanish for i in picked]
    assert evaluation.translate(model, tokenizer, sources) == [record["outputs"]["greedy"][i] for i in picked]
    alpha = record["chosen_alpha"]
    beam = evaluation.translate(model, tokenizer, sources, beam_size=4, alpha=alpha)
    assert beam == [record["outputs"][f"beam4_alpha{alpha}"][i] for i in picked]


def test_the_default_output_limit_is_the_papers_input_plus_50():
    assert [evaluation.output_limit(n, 256) for n in (0, 1, 8, 9, 200, 250)] == [58, 58, 58, 66, 250, 256]
