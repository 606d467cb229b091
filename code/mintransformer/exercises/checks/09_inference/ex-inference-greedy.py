"""Exercise: greedy decoding written as a loop over the model, checked against mt.greedy_decode."""

import sys
import types

import keras
import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer import data, recipes
from mintransformer.exercises.checking import call, refusing, to_numpy

OK_FORMAT = False
name = "ex-inference-greedy"
points = 3

RULE = ("`my_greedy_decode` calls one of the package's decoding loops (mt.greedy_decode, mt.decode_tokens, "
        "mt.beam_search, ...): write the loop yourself, calling model((source_tokens, target), training=False) "
        "at every step, as the exercise asks.")
# Every loop of the package that can give greedy decoding's tokens (beam search of width 1 can, too).
LOOPS = [mt.greedy_decode, mt.decode_tokens, mt.greedy_tokens, mt.beam_search, mt.beam_tokens, mt.sample_decode,
         mt.greedy_generate, mt.sample_generate]

HINT = ("At step t the model reads <start> and the t tokens chosen so far; the LAST row of its "
        "logits predicts the next token.")


def _date_model():
    """The shipped date model, loaded once per Python process: this chapter's checks share it."""
    store = sys.modules.setdefault("_mintransformer_checks_09_inference", types.ModuleType("store"))
    if not hasattr(store, "date_model"):
        store.date_model = recipes.load_pretrained_date_model()
    return store.date_model


def _tiny_model():
    """A small untrained model: its argmax often falls on <pad> or <start> unless they are banned."""
    keras.utils.set_random_seed(10)
    model = mt.MinTransformer(num_layers=2, d_model=16, num_heads=2, dff=32, input_vocab_size=12,
                              target_vocab_size=12, max_length=16, dropout=0.0)
    model((np.ones((1, 3), "int32"), np.ones((1, 2), "int32")))  # build the weights
    source = np.array([[10, 8, 7, 5, 5, 3], [3, 3, 4, 10, 0, 0], [7, 8, 11, 9, 8, 7], [8, 11, 5, 0, 0, 0]],
                      "int32")
    return model, source


def _variant(model, source, start_id, end_id, max_length, first=None, row=-1, ban=True, banned=None):
    """Greedy decoding with one known mistake: ``first`` token, logits ``row``, no ``ban``, or
    ``banned`` (the token banned instead of start_id)."""
    target = np.full((source.shape[0], 1), start_id if first is None else first, "int32")
    output = np.full((source.shape[0], max_length), model.pad_id, "int32")
    done = np.zeros(source.shape[0], bool)
    for t in range(max_length):
        logits = ops.convert_to_numpy(model((source, target), training=False))[:, row].astype("float64")
        if ban:
            logits[:, [model.pad_id, start_id if banned is None else banned]] = -np.inf
        next_ids = logits.argmax(axis=-1)
        output[:, t] = np.where(done, model.pad_id, next_ids)
        done |= next_ids == end_id
        if done.all():
            break
        target = np.concatenate([target, next_ids[:, None].astype("int32")], axis=1)
    return output


def _check(my_greedy_decode, model, source, start_id, end_id, max_length, case, variants=(), expected=None):
    if expected is None:
        expected = mt.greedy_decode(model, source, start_id, end_id, max_length)
    with refusing(LOOPS, my_greedy_decode, RULE):  # the expected tokens are computed above, outside
        got = call(my_greedy_decode, "my_greedy_decode", model, source, start_id, end_id, max_length)
    got = to_numpy(got, "The result of `my_greedy_decode`")
    if got.shape != expected.shape:
        raise AssertionError(
            f"{case}: your result has shape {got.shape}; it should have {expected.shape}, "
            f"(batch, max_length) = ({source.shape[0]}, {max_length}): one row per source, padded "
            "with model.pad_id to max_length."
        )
    if np.array_equal(got, expected):
        return
    pad = model.pad_id
    if (np.all(got[:, -1] == pad) and not np.all(expected[:, -1] == pad)
            and np.array_equal(got[:, :-1], expected[:, :-1])):
        raise AssertionError(f"{case}: your last column is all pad ({pad}) where a token belongs: you generate "
                             "only max_length - 1 tokens. Loop over range(max_length): the output has "
                             "max_length generated tokens.")
    if np.all(got[:, 0] == start_id) and np.array_equal(got[:, 1:], expected[:, :-1]):
        raise AssertionError(f"{case}: your rows begin with start_id. Return only the generated tokens, "
                             "without the <start> the decoder reads first.")
    for r in range(len(expected)):
        ends = np.flatnonzero(expected[r] == end_id)
        if len(ends) and np.array_equal(got[r, :ends[0] + 1], expected[r, :ends[0] + 1]):
            e = ends[0]
            if np.any(got[r, e + 1:] != pad):
                raise AssertionError(
                    f"{case}: row {r} writes end_id at position {e} and then goes on with more tokens. "
                    f"Everything after the end token must be model.pad_id ({pad}); stop when every "
                    "row has written end_id."
                )
        if len(ends) and got[r, ends[0]] == pad and np.array_equal(got[r, :ends[0]], expected[r, :ends[0]]):
            raise AssertionError(f"{case}: row {r} has {pad} (pad) where end_id belongs, at position "
                                 f"{ends[0]}: keep the end token in the output, then pad.")
    named = {
        "first": f"{case}: your decoder does not start from start_id ({start_id}). The first input of every row "
                 "is start_id, the argument (here not 1).",
        "pad": f"{case}: your rows start with model.pad_id, which the decoder masks out as padding. "
               f"The target starts with start_id ({start_id}).",
        "row": f"{case}: you take the logits of the first position. {HINT}",
        "ban": f"{case}: your decoder chose <pad> or <start>. Set the logits of model.pad_id and start_id "
               "to -inf before the argmax: the model was never trained to write them.",
        "banned": f"{case}: your decoder chose token {start_id}, which is start_id here: ban the argument "
                  "start_id, not the set-up cell's START (tokenizer.start_id, 1, the date model's <start>).",
    }
    options = {"first": dict(first=1), "pad": dict(first=pad), "row": dict(row=0), "ban": dict(ban=False),
               "banned": dict(banned=1)}
    for key in variants:
        wrong = _variant(model, source, start_id, end_id, max_length, **options[key])
        if not np.array_equal(wrong, expected) and np.array_equal(got, wrong):
            raise AssertionError(named[key])
    r, t = (int(i) for i in np.argwhere(got != expected)[0])
    raise AssertionError(f"{case}: row {r}, position {t}: you have token {int(got[r, t])}, mt.greedy_decode "
                         f"has {int(expected[r, t])}. {HINT}")


@test_case(points=1)
def the_date_model(my_greedy_decode):
    model, tokenizer = _date_model()
    texts = ["Tuesday, 17 March 1998", "10/2/2003", "june 11th, 87", "01-JAN-2000"]
    source = data.pad([tokenizer.encode(t) for t in texts])
    _check(my_greedy_decode, model, source, tokenizer.start_id, tokenizer.end_id, 12,
           "The date model on four dates", variants=("pad", "row"))


@test_case(points=1)
def rows_that_end_at_different_steps(my_greedy_decode):
    model, tokenizer = _date_model()
    texts = ["Tuesday, 17 March 1998", "10/2/2003", "December 25, 1998"]  # 1998-03-17, 2003-10-22, 1998-12-25
    source = data.pad([tokenizer.encode(t) for t in texts])
    zero = tokenizer.token_to_id["0"]  # as the end token, with max_length 6: rows end at 5, at 1, never
    _check(my_greedy_decode, model, source, tokenizer.start_id, zero, 6,
           "The date model with end_id = the id of '0', max_length=6 (rows end at different steps)")


@test_case(points=1)
def an_untrained_model(my_greedy_decode):
    model, source = _tiny_model()
    expected = _variant(model, source, 3, 7, 6)  # mt.greedy_decode's loop, uncompiled (the same tokens)
    _check(my_greedy_decode, model, source, 3, 7, 6, "An untrained model with start_id=3, end_id=7",
           variants=("first", "pad", "ban", "banned", "row"), expected=expected)
