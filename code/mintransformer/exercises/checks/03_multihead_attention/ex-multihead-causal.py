"""Exercise: copy our layer into Keras's, and compare them with a causal mask and a decoder mask."""

import keras
import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, to_numpy

OK_FORMAT = False
name = "ex-multihead-causal"
points = 3

B, T, D, H = 2, 5, 16, 4
DK = D // H
TOKENS = np.array([[4, 2, 7, 0, 0], [5, 1, 3, 8, 6]])  # 0 = padding


def _layers(seed=0):
    """Our layer with random weights (biases not 0), and a built Keras layer of the same size."""
    rng = np.random.default_rng(seed)
    ours = mt.MultiHeadAttention(d_model=D, num_heads=H)
    ours.build((None, None, D))
    ours.set_weights([(rng.normal(size=w.shape) / (np.sqrt(D) if w.ndim == 2 else 2)).astype("float32")
                      for w in ours.get_weights()])
    theirs = keras.layers.MultiHeadAttention(num_heads=H, key_dim=DK)
    theirs.build((B, T, D), (B, T, D))
    x = rng.normal(size=(B, T, D)).astype("float32")
    return ours, theirs, x


def _copied(copy_to_keras):
    ours, theirs, x = _layers()
    call(copy_to_keras, "copy_to_keras", ours, theirs)
    return ours, theirs, x


KERAS = {"query_dense": "wq", "key_dense": "wk", "value_dense": "wv", "output_dense": "wo"}


@test_case(points=1)
def the_weights(copy_to_keras):
    ours, theirs, _ = _copied(copy_to_keras)
    mine = {n: [ops.convert_to_numpy(w) for w in getattr(ours, n).weights] for n in KERAS.values()}
    for keras_name, our_name in KERAS.items():
        dense = getattr(theirs, keras_name)
        kernel, bias = (ops.convert_to_numpy(w) for w in (dense.kernel, dense.bias))
        shape = (H, DK, D) if keras_name == "output_dense" else (D, H, DK)
        expected = mine[our_name][0].reshape(shape)
        if like(kernel, expected) and like(bias, mine[our_name][1].reshape(bias.shape)):
            continue
        where = f"theirs.{keras_name}"
        for other, (k, _) in mine.items():
            if other != our_name and like(kernel, k.reshape(shape)):
                raise AssertionError(f"{where}.kernel holds ours.{other}'s kernel: it must get ours.{our_name}'s.")
        if like(kernel, mine[our_name][0].T.reshape(shape)):
            raise AssertionError(
                f"{where}.kernel is ours.{our_name}.kernel transposed, then reshaped: leave out the "
                f"transpose. A plain reshape of our kernel to {shape} already puts the block of head i "
                "where Keras keeps it.")
        close(kernel, expected, f"{where}.kernel", atol=1e-6,
              hint=f"It must be ours.{our_name}.kernel reshaped to {shape}: assign it with `.assign(...)`.")
        close(bias, mine[our_name][1].reshape(bias.shape), f"{where}.bias", atol=1e-6,
              hint=f"It must be ours.{our_name}.bias reshaped to {tuple(bias.shape)}.")


@test_case(points=1)
def causal_mask(copy_to_keras):
    ours, theirs, x = _copied(copy_to_keras)
    o1, w1 = ours(x, x, x, mask=mt.causal_mask(T), return_attention_scores=True)
    o2, w2 = theirs(x, x, use_causal_mask=True, return_attention_scores=True)
    close(w2, w1, "Keras's weights with use_causal_mask=True", atol=1e-5,
          hint="With the weights copied right, both layers compute the same function.")
    close(o2, o1, "Keras's output with use_causal_mask=True", atol=1e-5,
          hint="With the weights copied right, both layers compute the same function.")


@test_case(points=1)
def decoder_mask(keras_decoder_mask):
    answered(keras_decoder_mask, "keras_decoder_mask")
    got = to_numpy(call(keras_decoder_mask, "keras_decoder_mask", TOKENS), "keras_decoder_mask(tokens)")
    expected = to_numpy(mt.decoder_self_mask(TOKENS)[:, 0], "")
    causal = np.broadcast_to(to_numpy(mt.causal_mask(T), ""), (B, T, T))
    padding = np.broadcast_to(to_numpy(mt.padding_mask(TOKENS)[:, 0], ""), (B, T, T))
    if got.shape == (B, 1, T, T):
        raise AssertionError(
            "keras_decoder_mask(tokens) has shape (B, 1, T, T), ours with its head axis. Keras's "
            "attention_mask is (B, T, S): drop axis 1.")
    if got.shape != (B, T, T):
        raise AssertionError(f"keras_decoder_mask(tokens) has shape {got.shape}; Keras's attention_mask is "
                             f"(B, T, S), here {(B, T, T)}.")
    got = got > 0.5
    if np.array_equal(got, ~(expected > 0)):
        raise AssertionError("Your mask is True where a key is blocked. Keras's attention_mask, like ours, is "
                             "True (1) where a query MAY attend.")
    if np.array_equal(got, causal > 0):
        raise AssertionError("Your mask is the look-ahead mask only: the padded target positions must be "
                             "blocked too (0 = padding in `tokens`).")
    if np.array_equal(got, padding > 0):
        raise AssertionError("Your mask blocks the padding only: query t must not see the positions after t.")
    if np.array_equal(got, (causal > 0) | (padding > 0)):
        raise AssertionError("You allowed a key that only one of the masks allows (an OR). A key is allowed "
                             "only if both masks allow it: combine them with AND.")
    close(got, expected, "keras_decoder_mask(tokens)", atol=0,
          hint="Query t may attend to key s if s <= t and token s is not padding.")
    ours, theirs, x = _layers(1)
    for mine, dense in [(ours.wq, theirs.query_dense), (ours.wk, theirs.key_dense), (ours.wv, theirs.value_dense)]:
        dense.kernel.assign(ops.reshape(mine.kernel, (D, H, DK)))
        dense.bias.assign(ops.reshape(mine.bias, (H, DK)))
    theirs.output_dense.kernel.assign(ops.reshape(ours.wo.kernel, (H, DK, D)))
    theirs.output_dense.bias.assign(ours.wo.bias)
    o1 = ours(x, x, x, mask=mt.decoder_self_mask(TOKENS))
    o2 = theirs(x, x, attention_mask=got)
    close(o2, o1, "Keras's output with your attention_mask", atol=1e-5)
