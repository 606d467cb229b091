"""Exercise: the position-wise feed-forward network as a Keras layer, checked with copied weights."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, to_numpy

OK_FORMAT = False
name = "ex-layers-implement-ffn"
points = 3

D, DFF = 8, 32


def _reference(seed, dropout=0.1):
    """An mt.FeedForward(D, DFF) with random weights, biases included (they start at 0)."""
    rng = np.random.default_rng(seed)
    ref = mt.FeedForward(D, DFF, dropout)
    ref.build((None, None, D))
    ref.set_weights([
        (rng.normal(size=w.shape) / np.sqrt(w.shape[0] if w.ndim == 2 else 4)).astype("float32")
        for w in ref.get_weights()
    ])
    return ref


def _student(MyFeedForward, ref, x, dropout=0.1):
    """The student's layer, built on x, with the weights of ``ref`` copied in."""
    answered(MyFeedForward, "MyFeedForward")
    layer = call(MyFeedForward, "MyFeedForward", D, DFF, dropout=dropout)
    call(layer, "MyFeedForward(...)", x, training=False)  # builds the weights
    shapes = [tuple(w.shape) for w in layer.get_weights()]
    expected = [tuple(w.shape) for w in ref.get_weights()]
    if shapes == expected[:2] or shapes == [(D, D), (D,)]:
        raise AssertionError(
            f"Your layer has one weight matrix and one bias, {shapes}: one Dense layer is one linear "
            "map. The FFN is two linear maps with a ReLU between them, W_1 (D, dff) then W_2 (dff, D).")
    if shapes != expected:
        raise AssertionError(
            f"Your layer's weights have shapes {shapes}; expected {expected}: W_1 (D, dff), b_1 (dff,), "
            "W_2 (dff, D), b_2 (D,), created in this order (the inner Dense before the outer one).")
    layer.set_weights(ref.get_weights())
    return layer


@test_case(points=1)
def the_equation(MyFeedForward):
    ref = _reference(0)
    x = np.random.default_rng(1).normal(size=(2, 5, D)).astype("float32")
    layer = _student(MyFeedForward, ref, x)
    out = call(layer, "MyFeedForward(...)", x, training=False)
    W1, b1, W2, b2 = ref.get_weights()
    if like(out, (x @ W1 + b1) @ W2 + b2):
        raise AssertionError("Your layer is linear: it has no ReLU. FFN(x) = max(0, x W_1 + b_1) W_2 + b_2.")
    expected = to_numpy(ref(x, training=False), "")
    if like(out, np.maximum(expected, 0)):
        raise AssertionError("Your output is clipped at 0: the ReLU goes between the two linear maps "
                             "only, not after W_2 (the outer Dense has no activation).")
    if like(out, np.maximum(x, 0) @ W1 @ W2 + b1 @ W2 + b2) or like(out, (np.maximum(x, 0) @ W1 + b1) @ W2 + b2):
        raise AssertionError("Your ReLU acts on the input x: it goes after the first map, max(0, x W_1 + b_1).")
    close(out, expected, "Your FFN's output (training=False)", atol=1e-5,
          hint="FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 on the last axis; no dropout when training=False.")


@test_case(points=1)
def every_position_alone(MyFeedForward):
    ref = _reference(2)
    x = np.random.default_rng(3).normal(size=(3, 4, 7, D)).astype("float32")  # any leading axes
    layer = _student(MyFeedForward, ref, x[0])
    close(call(layer, "MyFeedForward(...)", x, training=False), ref(x, training=False),
          "Your FFN on an input of shape (3, 4, 7, D)", atol=1e-5,
          hint="Apply the same two maps to every vector of the last axis, whatever the leading axes.")
    one = call(layer, "MyFeedForward(...)", x[:1, :1, :1], training=False)
    close(one, to_numpy(ref(x, training=False), "")[:1, :1, :1], "Your FFN on one position alone", atol=1e-5,
          hint="A position's output depends on that position only.")


@test_case(points=1)
def dropout_on_the_inner_activations(MyFeedForward):
    ref = _reference(4, dropout=0.5)
    x = np.random.default_rng(5).normal(size=(4, 6, D)).astype("float32")
    layer = _student(MyFeedForward, ref, x, dropout=0.5)
    inference = to_numpy(call(layer, "MyFeedForward(...)", x, training=False), "Your output")
    close(inference, ref(x, training=False), "Your FFN with dropout=0.5 and training=False", atol=1e-5,
          hint="Dropout acts only with training=True.")
    training = to_numpy(call(layer, "MyFeedForward(...)", x, training=True), "Your output")
    if np.allclose(training, inference, atol=1e-6):
        raise AssertionError("With dropout=0.5 and training=True your output equals the inference output: "
                             "apply a keras.layers.Dropout(dropout) to the inner activations, passing "
                             "training=training by keyword.")
    # Dropout on the output, at rate 0.5, makes every output 0 or twice its inference value.
    zero_or_doubled = np.isclose(training, 0, atol=1e-7) | np.isclose(training, 2 * inference, atol=1e-5)
    if np.mean(zero_or_doubled) > 0.95:
        raise AssertionError(
            "Dropout acts on your output: the package drops the inner activations, between W_1 and W_2. "
            "(The dropout of the sub-layer's output belongs to the residual connection, not to the FFN.)")
