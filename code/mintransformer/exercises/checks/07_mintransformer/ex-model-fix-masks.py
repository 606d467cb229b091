"""Exercise: find and fix the bug of the MinTransformer course chapter: every mask is None."""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-model-fix-masks"
points = 3

SOURCE = np.array([[5, 8, 3, 9, 12, 0, 0],
                   [7, 2, 6, 0, 0, 0, 0]])  # (B, S) = (2, 7); 0 = padding
TARGET = np.array([[1, 4, 6, 2, 7],
                   [1, 3, 11, 10, 0]])  # (B, T) = (2, 5)
FUTURE = TARGET.copy()
FUTURE[:, 3:4] = [[9], [5]]  # another token at position 3 (real in both sentences)


def _model():
    keras.utils.set_random_seed(0)
    model = mt.MinTransformer(2, 16, 2, 32, 20, 20, max_length=12, share_embeddings=True)
    model((SOURCE, TARGET), training=False)  # builds the weights
    return model


def _logits(model, source, target, encoder_mask, self_mask, cross_mask):
    context = model.encoder(model.source_embedding(source), mask=encoder_mask)
    H = model.decoder(model.target_embedding(target), context, self_mask=self_mask, cross_mask=cross_mask)
    return to_numpy(model.output_projection(H), "")


def _student(fixed_logits, model, source, target):
    got = to_numpy(call(fixed_logits, "fixed_logits", model, source, target), "The logits of `fixed_logits`")
    if got.shape != (source.shape[0], target.shape[1], model.target_vocab_size):
        raise AssertionError(
            f"`fixed_logits` returns shape {got.shape}; logits have shape (B, T, V) = "
            f"{(source.shape[0], target.shape[1], model.target_vocab_size)}."
        )
    return got


@test_case(points=1)
def the_future_is_hidden(fixed_logits):
    model = _model()
    got = _student(fixed_logits, model, SOURCE, TARGET)
    if like(got, _logits(model, SOURCE, TARGET, None, None, None), atol=1e-5):
        raise AssertionError(
            "Still the bug: these are the logits with every mask None. Build the masks from the token ids: "
            "mt.padding_mask(source, model.pad_id) for the encoder and for cross-attention, "
            "mt.decoder_self_mask(target, model.pad_id) for the decoder's self-attention."
        )
    changed = _student(fixed_logits, model, SOURCE, FUTURE)
    leak = np.abs(got[:, :3] - changed[:, :3]).max()
    if leak > 1e-5:
        raise AssertionError(
            f"No causal mask: changing the target token at position 3 changes the logits at positions 0-2 "
            f"(by up to {leak:.3g}), so the decoder sees the future, and in training it can read the token "
            "it must predict. Its self-attention needs the look-ahead mask: mt.decoder_self_mask(target, model.pad_id)."
        )


@test_case(points=1)
def the_source_padding_is_hidden(fixed_logits):
    model = _model()
    got = _student(fixed_logits, model, SOURCE, TARGET)
    padded = _student(fixed_logits, model, np.pad(SOURCE, ((0, 0), (0, 3))), TARGET)
    change = np.abs(got - padded).max()
    if change > 1e-5:
        encoder_only = _logits(model, SOURCE, TARGET, mt.padding_mask(SOURCE), mt.decoder_self_mask(TARGET), None)
        if like(got, encoder_only, atol=1e-5):
            fix = "Cross-attention has no mask: pass cross_mask=mt.padding_mask(source, model.pad_id)."
        else:
            fix = ("Give the encoder mask=mt.padding_mask(source, model.pad_id), and the decoder the same "
                   "mask as cross_mask.")
        raise AssertionError(
            f"Padding the source with 3 more pads changes the logits (by up to {change:.3g}): the pads are "
            f"attended. {fix}"
        )


@test_case(points=1)
def same_as_the_model(fixed_logits):
    model = _model()
    got = _student(fixed_logits, model, SOURCE, TARGET)
    causal_only = _logits(model, SOURCE, TARGET, mt.padding_mask(SOURCE), mt.causal_mask(TARGET.shape[1]),
                          mt.padding_mask(SOURCE))
    if like(got, causal_only, atol=1e-5):
        raise AssertionError(
            "Your decoder self-attention has the look-ahead mask but not the target padding: at a pad "
            "position the query attends to the pads before it. Use mt.decoder_self_mask(target, model.pad_id), "
            "look-ahead AND padding."
        )
    close(got, model((SOURCE, TARGET), training=False), "Your logits", atol=1e-5,
          hint="They must equal model((source, target)), which builds the same masks from model.pad_id.")
