"""Exercise: copy Keras's layer into ours, and compare them with a causal mask and a decoder mask."""

import keras
import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-multihead-causal"
points = 3

B, T, D, H = 2, 5, 16, 4
DK = D // H
TOKENS = np.array([[4, 2, 7, 0, 0], [5, 1, 3, 8, 6]])  # 0 = padding

# The package's mask functions, which keras_decoder_mask must not call: it builds the mask itself.
MASK_FUNCTIONS = [mt.decoder_self_mask, mt.causal_mask, mt.padding_mask, mt.attends_causally, mt.merge_padding]
MASK_RULE = ("Build the mask from `tokens` yourself, with keras.ops or NumPy, as the exercise asks: do not "
             "call the package's mask functions (decoder_self_mask, causal_mask, padding_mask, ...).")

KERAS = {"query_dense": "wq", "key_dense": "wk", "value_dense": "wv", "output_dense": "wo"}
KERNEL_SHAPE = {"query_dense": (D, H, DK), "key_dense": (D, H, DK), "value_dense": (D, H, DK),
                "output_dense": (H, DK, D)}


def _random(layer, rng):
    """Random kernels and biases (biases not 0, so that a forgotten bias shows)."""
    layer.set_weights([(rng.normal(size=w.shape) / (np.sqrt(D) if w.ndim > 1 else 2)).astype("float32")
                       for w in layer.get_weights()])


def _layers(seed=0):
    """A built Keras layer with random weights, a built layer of ours (its own weights), an input."""
    rng = np.random.default_rng(seed)
    theirs = keras.layers.MultiHeadAttention(num_heads=H, key_dim=DK)
    theirs.build((B, T, D), (B, T, D))
    _random(theirs, rng)
    ours = mt.MultiHeadAttention(d_model=D, num_heads=H)
    ours.build((None, None, D))
    _random(ours, rng)
    x = rng.normal(size=(B, T, D)).astype("float32")
    return theirs, ours, x


def _copied(copy_from_keras):
    theirs, ours, x = _layers()
    call(copy_from_keras, "copy_from_keras", theirs, ours)
    return theirs, ours, x


def _numpy(dense):
    return [ops.convert_to_numpy(w) for w in (dense.kernel, dense.bias)]


@test_case(points=1)
def the_weights(copy_from_keras):
    theirs, ours, _ = _copied(copy_from_keras)
    keras_weights = {n: _numpy(getattr(theirs, n)) for n in KERAS}
    for keras_name, our_name in KERAS.items():
        kernel, bias = _numpy(getattr(ours, our_name))
        their_kernel, their_bias = keras_weights[keras_name]
        expected = their_kernel.reshape(D, D)
        where = f"ours.{our_name}"
        if not like(kernel, expected):
            for other, (k, _) in keras_weights.items():
                if other != keras_name and like(kernel, k.reshape(D, D)):
                    raise AssertionError(f"{where}.kernel holds theirs.{other}'s kernel: it must get "
                                         f"theirs.{keras_name}'s.")
            if like(kernel, expected.T):
                raise AssertionError(
                    f"{where}.kernel is theirs.{keras_name}.kernel reshaped to (D, D), then transposed: "
                    "leave out the transpose. A plain reshape already puts head i's block where ours keeps it.")
            if keras_name != "output_dense" and like(kernel, their_kernel.transpose(0, 2, 1).reshape(D, D)):
                raise AssertionError(
                    f"{where}.kernel gives head i the columns i, i + h, i + 2h, ... (a transpose of Keras's "
                    "(D, h, d_k) before the reshape). Head i's columns must be the block "
                    "[i d_k, (i + 1) d_k): a plain reshape of Keras's kernel to (D, D).")
            if keras_name == "output_dense" and like(kernel, their_kernel.transpose(1, 0, 2).reshape(D, D)):
                raise AssertionError(
                    f"{where}.kernel gives head i the rows i, i + h, i + 2h, ... (a transpose of Keras's "
                    "(h, d_k, D) before the reshape). Head i's rows must be the block [i d_k, (i + 1) d_k): "
                    "a plain reshape of Keras's kernel to (D, D).")
            close(kernel, expected, f"{where}.kernel", atol=1e-6,
                  hint=f"It must be theirs.{keras_name}.kernel, {KERNEL_SHAPE[keras_name]}, reshaped to "
                  f"(D, D): assign it with `.assign(...)` (or set_weights).")
        close(bias, their_bias.reshape(D), f"{where}.bias", atol=1e-6,
              hint=f"It must be theirs.{keras_name}.bias, {tuple(their_bias.shape)}, reshaped to (D,).")


@test_case(points=1)
def causal_mask(copy_from_keras):
    theirs, ours, x = _copied(copy_from_keras)
    o1, w1 = ours(x, x, x, attention_mask=mt.causal_mask(T), return_attention_scores=True)
    o2, w2 = theirs(x, x, use_causal_mask=True, return_attention_scores=True)
    hint = ("The expected values are Keras's, with use_causal_mask=True: with the weights copied right, "
            "both layers compute the same function.")
    close(w1, w2, "Our layer's weight tensor with attention_mask=mt.causal_mask(T)", atol=1e-5, hint=hint)
    close(o1, o2, "Our layer's output with attention_mask=mt.causal_mask(T)", atol=1e-5, hint=hint)


@test_case(points=1)
def decoder_mask(keras_decoder_mask):
    answered(keras_decoder_mask, "keras_decoder_mask")
    with refusing(MASK_FUNCTIONS, keras_decoder_mask, MASK_RULE):
        got = to_numpy(call(keras_decoder_mask, "keras_decoder_mask", TOKENS), "keras_decoder_mask(tokens)")
    expected = to_numpy(mt.decoder_self_mask(TOKENS)[:, 0], "") > 0.5
    causal = np.broadcast_to(to_numpy(mt.causal_mask(T), "") > 0.5, (B, T, T))
    keys = np.broadcast_to((TOKENS != 0)[:, None, :], (B, T, T))  # padding blocks columns (keys)
    queries = np.broadcast_to((TOKENS != 0)[:, :, None], (B, T, T))  # rows (queries): wrong
    if got.shape == (B, 1, T, T):
        raise AssertionError(
            "keras_decoder_mask(tokens) has shape (B, 1, T, T), ours with its head axis. Keras's "
            "attention_mask is (B, T, S): drop axis 1.")
    if got.shape != (B, T, T):
        raise AssertionError(f"keras_decoder_mask(tokens) has shape {got.shape}; Keras's attention_mask is "
                             f"(B, T, S), here {(B, T, T)}.")
    if not np.all((got == 0) | (got == 1)):
        values = ", ".join(f"{v:g}" for v in np.unique(got)[:4])
        raise AssertionError(
            f"keras_decoder_mask(tokens) holds the values {values}: Keras's attention_mask is boolean "
            "(True/1 = may attend, False/0 = blocked), not an additive 0 / -1e9 mask. Return "
            "True/False (or 1/0).")
    got = got > 0.5
    if np.array_equal(got, ~expected):
        raise AssertionError("Your mask is True where a key is blocked. Keras's attention_mask, like ours, is "
                             "True (1) where a query MAY attend.")
    if np.array_equal(got, causal):
        raise AssertionError("Your mask is the look-ahead mask only: the padded target positions must be "
                             "blocked too (0 = padding in `tokens`).")
    if np.array_equal(got, keys):
        raise AssertionError("Your mask blocks the padding only: query t must not see the positions after t.")
    if np.array_equal(got, causal | keys):
        raise AssertionError("You allowed a key that only one of the masks allows (an OR). A key is allowed "
                             "only if both masks allow it: combine them with AND.")
    for wrong in (causal & queries, causal & queries & keys, queries):
        if np.array_equal(got, wrong):
            raise AssertionError(
                "Your mask blocks the rows of the padded positions, i.e. their queries. Padding blocks "
                "keys, i.e. columns: mask[b, t, s] is False when token s is padding, for every query t.")
    close(got, expected, "keras_decoder_mask(tokens)", atol=0,
          hint="Query t may attend to key s if s <= t and token s is not padding.")
    # The two layers with the same weights (copied here, not by your function).
    theirs, ours, x = _layers(1)
    ours.set_weights([np.reshape(w, o.shape) for w, o in zip(theirs.get_weights(), ours.get_weights())])
    o1, w1 = ours(x, x, x, attention_mask=mt.decoder_self_mask(TOKENS), return_attention_scores=True)
    o2, w2 = theirs(x, x, attention_mask=got, return_attention_scores=True)
    close(w2, w1, "Keras's weight tensor with your attention_mask", atol=1e-5)
    close(o2, o1, "Keras's output with your attention_mask", atol=1e-5)
