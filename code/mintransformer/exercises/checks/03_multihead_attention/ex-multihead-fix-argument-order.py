"""Exercise: find and fix the from-scratch TensorFlow tutorial's (v, k, q) argument order."""

import keras
import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, to_numpy

OK_FORMAT = False
name = "ex-multihead-fix-argument-order"
points = 3

D, H = 16, 4


class TutorialMultiHeadAttention(keras.layers.Layer):
    """The exercise's layer (the tutorial's, in keras.ops, with the book's attention)."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.supports_masking = True
        self.num_heads = num_heads
        self.d_model = d_model
        self.depth = d_model // num_heads
        self.wq = keras.layers.Dense(d_model)
        self.wk = keras.layers.Dense(d_model)
        self.wv = keras.layers.Dense(d_model)
        self.dense = keras.layers.Dense(d_model)

    def split_heads(self, x, batch_size):
        x = ops.reshape(x, (batch_size, -1, self.num_heads, self.depth))
        return ops.transpose(x, (0, 2, 1, 3))

    def call(self, v, k, q, mask):
        batch_size = ops.shape(q)[0]
        q = self.split_heads(self.wq(q), batch_size)
        k = self.split_heads(self.wk(k), batch_size)
        v = self.split_heads(self.wv(v), batch_size)
        attention, _ = mt.scaled_dot_product_attention(q, k, v, mask)
        attention = ops.transpose(attention, (0, 2, 1, 3))
        return self.dense(ops.reshape(attention, (batch_size, -1, self.d_model)))


class _Spy:
    """Stands for the layer and records which tensor arrives as v, k, q and mask."""

    def __init__(self):
        self.calls = []

    def __call__(self, v, k, q, mask=None, **kwargs):
        self.calls.append((v, k, q, mask))
        return np.zeros((np.shape(q)[0], np.shape(q)[1], D), "float32")

    call = __call__


def _inputs(seed, T, S):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, T, D)).astype("float32")
    enc_output = rng.normal(size=(2, S, D)).astype("float32")
    tokens = np.array([[5, 8, 2, 9, 4, 7, 6][:S], [3, 6, 1, 7, 0, 0, 0][:S]])  # 0 = padding
    return x, enc_output, mt.padding_mask(tokens)


def _which(value, x, enc_output):
    array = to_numpy(value, "an argument")
    if array.shape == x.shape and np.array_equal(array, x):
        return "x"
    if array.shape == enc_output.shape and np.array_equal(array, enc_output):
        return "enc_output"
    return "something else"


RULE = ("The layer's call is (v, k, q, mask): q (the 3rd argument) must be the decoder states x; "
        "k and v (the 1st and 2nd) must both be the encoder output enc_output.")


def _roles(fixed_cross_attention, T, S):
    """What the student's function passes to the layer as q, k, v and mask (None if it never calls it)."""
    x, enc_output, mask = _inputs(0, T=T, S=S)
    spy = _Spy()
    call(fixed_cross_attention, "fixed_cross_attention", spy, x, enc_output, mask)
    if not spy.calls:
        return None
    v, k, q, given_mask = spy.calls[-1]
    return {"q": _which(q, x, enc_output), "k": _which(k, x, enc_output), "v": _which(v, x, enc_output),
            "mask": given_mask}


def _roles_message(roles):
    """The message for wrong inputs to the layer, or None if they are right."""
    if roles["q"] == "enc_output" and roles["k"] == "enc_output" and roles["v"] == "x":
        return ("Still the bug: the layer's call is (v, k, q, mask), so att(x, enc_output, enc_output, mask) "
                "makes the encoder output the queries and the keys, and the decoder states x the values.")
    if roles["q"] != "x":
        return (f"The layer gets {roles['q']} as its queries q: in encoder-decoder attention the decoder "
                f"asks, so q must be the decoder states x. {RULE}")
    if roles["k"] != "enc_output" or roles["v"] != "enc_output":
        return (f"The layer gets {roles['k']} as its keys k and {roles['v']} as its values v: both must be "
                f"the encoder output enc_output. {RULE}")
    return None


@test_case(points=1)
def the_layer_gets_the_right_inputs(fixed_cross_attention):
    answered(fixed_cross_attention, "fixed_cross_attention")
    roles = _roles(fixed_cross_attention, T=4, S=6)
    if roles is None:
        raise AssertionError("`fixed_cross_attention` never calls the layer `att` it is given: call it.")
    message = _roles_message(roles)
    if message:
        raise AssertionError(message)
    if roles["mask"] is None:
        raise AssertionError("The layer gets no mask: pass `mask` on, or the padded source positions get weight.")


@test_case(points=1)
def source_longer_than_target(fixed_cross_attention):
    _compare(fixed_cross_attention, 1, T=4, S=6)


@test_case(points=1)
def source_as_long_as_target(fixed_cross_attention):
    _compare(fixed_cross_attention, 2, T=5, S=5)


def _compare(fixed_cross_attention, seed, T, S):
    x, enc_output, mask = _inputs(seed, T, S)
    reference = mt.MultiHeadAttention(d_model=D, num_heads=H)
    reference.build((None, None, D))
    rng = np.random.default_rng(seed)
    reference.set_weights([(rng.normal(size=w.shape) / (np.sqrt(D) if w.ndim == 2 else 2)).astype("float32")
                           for w in reference.get_weights()])
    att = TutorialMultiHeadAttention(D, H)
    att(v=enc_output, k=enc_output, q=x, mask=mask)  # builds the weights
    att.set_weights(reference.get_weights())  # wq, wk, wv, then dense = wo
    try:
        got = call(fixed_cross_attention, "fixed_cross_attention", att, x, enc_output, mask)
    except AssertionError as error:
        if "must cover the same S positions" in str(error):
            try:
                roles = _roles(fixed_cross_attention, T, S)
            except AssertionError:
                roles = None
            said = (f"the layer got {roles['q']} as q, {roles['k']} as k and {roles['v']} as v. "
                    if roles else "")
            still = roles and roles["q"] == roles["k"] == "enc_output" and roles["v"] == "x"
            raise AssertionError(
                f"{error}\n\nWith S = {S} source and T = {T} target positions: {said}"
                f"{_roles_message(roles) if still else RULE}") from None
        raise
    expected = ops.convert_to_numpy(reference(x, enc_output, enc_output, attention_mask=mask))
    if S == T and like(got, att(x, enc_output, enc_output, mask)):
        raise AssertionError(
            f"Still the bug: with S = T = {S} the tutorial's call runs and has the right shape, but "
            "the layer's call is (v, k, q, mask): the encoder output is taken as the queries and the "
            "keys, and the decoder states x as the values.")
    if to_numpy(got, "the output").shape == (2, S, D) and S != T:
        raise AssertionError(f"The output has the source's length S = {S}: it must have one row per query, "
                             f"the target's T = {T}.")
    close(got, expected, f"With S = {S}, T = {T}: the output", atol=1e-5,
          hint="It must equal mt.MultiHeadAttention(x, enc_output, enc_output, attention_mask=mask) with the same "
          "weights: the queries from x, the keys and the values from enc_output.")
