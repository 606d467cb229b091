"""Exercise: find and fix the bug of a perplexity that averages over the padding."""

import sys
import types

import keras
import numpy as np
from otter.test_files import test_case

from mintransformer import data, recipes
from mintransformer.model import MinTransformer
from mintransformer.exercises.checking import call, close, refusing, to_numpy
from mintransformer.recipes import ablations

OK_FORMAT = False
name = "ex-ablations-fix-perplexity"
points = 2

RULE = ("`fixed_perplexity` calls ablations.perplexity: fix the buggy function's own code, as the exercise "
        "asks.")


def _date_model():
    """The shipped date model, loaded once per Python process."""
    store = sys.modules.setdefault("_mintransformer_checks_11_ablations", types.ModuleType("store"))
    if not hasattr(store, "date_model"):
        store.date_model = recipes.load_pretrained_date_model()
    return store.date_model


def _reversal_model():
    """A small untrained model for the reversal strings, whose targets differ in length."""
    tokenizer, _, test, _ = ablations.task_splits("reversal")
    keras.utils.set_random_seed(1)
    model = MinTransformer(1, 16, 2, 32, tokenizer.vocab_size, tokenizer.vocab_size, 32, dropout=0.0,
                           share_embeddings=True)
    return model, tokenizer, test


def _unmasked(model, tokenizer, pairs):
    sources, targets_in, targets_out = data.encode_pairs(pairs, tokenizer)
    source, target_in, target_out = data.pad(sources), data.pad(targets_in), data.pad(targets_out)
    logits = model((source, target_in), training=False)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(target_out, logits)
    return float(np.exp(keras.ops.convert_to_numpy(loss)))


def _check(fixed_perplexity, model, tokenizer, pairs, what):
    with refusing([ablations.perplexity], fixed_perplexity, RULE):  # the expected value is computed below
        result = call(fixed_perplexity, "fixed_perplexity", model, tokenizer, pairs)
    got = to_numpy(result, "fixed_perplexity's result")
    if got.size != 1:
        raise AssertionError(f"fixed_perplexity must return one number; it returned shape {got.shape}.")
    got = float(got.reshape(()))
    right = ablations.perplexity(model, tokenizer, pairs)
    if abs(got - _unmasked(model, tokenizer, pairs)) < 1e-4 * right and abs(got - right) > 1e-3 * right:
        raise AssertionError(f"fixed_perplexity on {what} still averages over the padding positions: "
                             "count the real target tokens only.")
    close(got, right, f"fixed_perplexity on {what}", atol=0, rtol=1e-3,
          hint="Exponentiate the mean cross-entropy (no label smoothing) over the non-pad target tokens.")


@test_case(points=1)
def the_test_dates(fixed_perplexity):
    model, tokenizer = _date_model()
    _, _, test, _ = ablations.task_splits("dates")
    _check(fixed_perplexity, model, tokenizer, test[:400], "400 test dates")


@test_case(points=1)
def targets_of_different_lengths(fixed_perplexity):
    model, tokenizer, test = _reversal_model()
    _check(fixed_perplexity, model, tokenizer, test[:400], "400 reversal strings (an untrained model)")
