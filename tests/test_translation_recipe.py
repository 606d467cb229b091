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
