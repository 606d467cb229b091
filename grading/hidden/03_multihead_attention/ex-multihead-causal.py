"""Hidden cases of ex-multihead-causal: other sizes (d_model = 24, h = 3, T = 6) and other target batches.

Merged after the public check (mt.exercises.merged_source): MASK_FUNCTIONS and MASK_RULE are its.
"""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, refusing, to_numpy


def _hidden_layers(seed, batch, length, d_model, heads):
    """A Keras layer and one of ours, built for these sizes, each with its own random weights; an input."""
    rng = np.random.default_rng(seed)
    theirs = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=d_model // heads)
    theirs.build((batch, length, d_model), (batch, length, d_model))
    ours = mt.MultiHeadAttention(d_model=d_model, num_heads=heads)
    ours.build((None, None, d_model))
    for layer in (theirs, ours):
        layer.set_weights([(rng.normal(size=w.shape) / (np.sqrt(d_model) if w.ndim > 1 else 2)).astype("float32")
                           for w in layer.get_weights()])
    return theirs, ours, rng.normal(size=(batch, length, d_model)).astype("float32")


@test_case(points=1, hidden=True)
def hidden_copy_into_another_size(copy_from_keras):
    theirs, ours, x = _hidden_layers(11, 3, 6, 24, 3)
    call(copy_from_keras, "copy_from_keras", theirs, ours)
    o1, w1 = ours(x, x, x, attention_mask=mt.causal_mask(6), return_attention_scores=True)
    o2, w2 = theirs(x, x, use_causal_mask=True, return_attention_scores=True)
    what = "Hidden case, d_model = 24, h = 3, T = 6: our layer's"
    close(w1, to_numpy(w2, ""), f"{what} weight tensor with attention_mask=mt.causal_mask(T)", atol=1e-5,
          hint="Copy each kernel and bias whatever the layer's size: reshape to ours' shapes, not to fixed ones.")
    close(o1, to_numpy(o2, ""), f"{what} output with attention_mask=mt.causal_mask(T)", atol=1e-5)


@test_case(points=1, hidden=True)
def hidden_mask_of_other_batches(keras_decoder_mask):
    answered(keras_decoder_mask, "keras_decoder_mask")
    for tokens in (np.array([[3, 0, 0, 0, 0, 0, 0], [4, 5, 6, 7, 8, 9, 2], [1, 2, 3, 4, 0, 0, 0]]),
                   np.array([[6]])):
        with refusing(MASK_FUNCTIONS, keras_decoder_mask, MASK_RULE):  # noqa: F821 (the public check's)
            got = to_numpy(call(keras_decoder_mask, "keras_decoder_mask", tokens), "keras_decoder_mask(tokens)")
        expected = (to_numpy(mt.decoder_self_mask(tokens)[:, 0], "") > 0.5).astype("float64")
        close((got > 0.5).astype("float64") if got.shape == expected.shape else got, expected,
              f"Hidden case, tokens of shape {tokens.shape}: keras_decoder_mask(tokens)", atol=0,
              hint="Build the mask for the batch and the length of `tokens`: query t may attend to key s if "
                   "s <= t and token s is not padding.")
