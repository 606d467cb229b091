"""The Spanish-to-English model of chapter 10: its settings, its data, and the shipped weights."""

import importlib.resources
import json

import numpy as np

from ..model import MinTransformer
from . import bpe, corpus

# Settings of the shipped model (scripts/train_translation_model.py), sized for 2 CPU cores and
# under two hours: the paper's base model has 6 + 6 layers of d_model 512 and a 37,000-token
# vocabulary trained on 4.5 million sentence pairs; ours has 3 + 3 layers of 256 and 8,000
# subwords for 28,828 verses. One vocabulary for both languages, so the source embedding, the
# target embedding and the output projection are one matrix (paper, section 3.4). Batches hold
# about ``max_tokens`` tokens a side (the paper: about 25,000). Training pairs longer than
# ``max_train_tokens`` subwords on either side are left out, a guard for a reader's own corpus:
# the longest training verse has 104. The schedule is the paper's, without a cool-down. The
# weights of the last ``average_last`` epochs are averaged: the paper averaged the last 5
# checkpoints of its base models, written at 10-minute intervals (section 6.1), that is the last
# 40 minutes of 12 hours; ours are a quarter of the run apart, so the average spans more of it.
TRANSLATION = dict(
    vocab_size=8000,
    model=dict(num_layers=3, d_model=256, num_heads=4, dff=1024, max_length=256, dropout=0.1),
    max_train_tokens=128, max_tokens=3000, warmup_steps=1500, label_smoothing=0.1, epochs=12, average_last=3,
)
WEIGHTS = "translation_model.weights.h5"
TOKENIZER = "translation_bpe.json"
TRAINING_RECORD = "translation_model.json"
EVALUATION = "translation_evaluation.json"


def build_translation_model(vocab_size=TRANSLATION["vocab_size"], **overrides):
    """A ``MinTransformer`` of the recipe's size with one shared, tied vocabulary."""
    settings = {**TRANSLATION["model"], **overrides}
    model = MinTransformer(**settings, input_vocab_size=vocab_size, target_vocab_size=vocab_size,
                           share_embeddings=True, pad_id=bpe.PAD)
    model((np.ones((1, 4), "int32"), np.ones((1, 4), "int32")))  # build the weights
    return model


def _pretrained(name):
    return importlib.resources.files("mintransformer") / "pretrained" / name


def load_pretrained_translation_model():
    """The model trained by ``scripts/train_translation_model.py``: (model, tokenizer, record).

    ``record`` is what the script wrote about the run: machine, versions, wall time, settings.
    """
    with importlib.resources.as_file(_pretrained(TOKENIZER)) as file:
        tokenizer = bpe.BPE.load(file)
    model = build_translation_model(tokenizer.vocab_size)
    with importlib.resources.as_file(_pretrained(WEIGHTS)) as file:
        model.load_weights(file)
    record = json.loads(_pretrained(TRAINING_RECORD).read_text())
    return model, tokenizer, record


def load_translation_evaluation():
    """What ``scripts/evaluate_translation_model.py`` measured on the shipped model, as a dict.

    Beam search on all the test books takes minutes; the script ran it once, with the length
    penalty's ``alpha`` chosen on the development book, and kept every output
    (``outputs[system]``, in the order of the test verses) beside the scores, the machine and the
    versions, so that the scores can be recomputed from the outputs.
    """
    return json.loads(_pretrained(EVALUATION).read_text())


def encode_split(tokenizer, verses, max_tokens=None):
    """Lists of id lists (sources, decoder inputs, labels) for ``verses`` (Spanish -> English),
    leaving out the pairs longer than ``max_tokens`` subwords on either side."""
    sources, targets_in, targets_out = [], [], []
    for verse in verses:
        source, target = tokenizer.encode(verse.spanish), tokenizer.encode(verse.english)
        if max_tokens is not None and max(len(source), len(target) + 1) > max_tokens:
            continue
        sources.append(source)
        targets_in.append([bpe.START] + target)
        targets_out.append(target + [bpe.END])
    return sources, targets_in, targets_out


__all__ = ["TRANSLATION", "build_translation_model", "load_pretrained_translation_model", "encode_split", "corpus"]
