"""Exercise: the position-wise feed-forward network as a Keras layer, checked with copied weights."""

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-layers-implement-ffn"
points = 4

D, DFF = 8, 32
RULE = ("Write the FFN with keras.layers.Dense and keras.layers.Dropout, as the exercise asks: `MyFeedForward` "
        "must not be, subclass or use mt.FeedForward (nor a package layer built on it).")


def _reference(seed, dropout=0.1, d=D, dff=DFF):
    """An mt.FeedForward(d, dff) with random weights, biases included (they start at 0)."""
    rng = np.random.default_rng(seed)
    ref = mt.FeedForward(d, dff, dropout)
    ref.build((None, None, d))
    ref.set_weights([
        (rng.normal(size=w.shape) / np.sqrt(w.shape[0] if w.ndim == 2 else 4)).astype("float32")
        for w in ref.get_weights()
    ])
    return ref


def _student(MyFeedForward, ref, x, dropout=0.1, d=D, dff=DFF):
    """The student's layer, built on x, with the weights of ``ref`` copied in (matched by shape)."""
    answered(MyFeedForward, "MyFeedForward")
    with refusing([mt.FeedForward], MyFeedForward, RULE):  # made and built with the package's FFN refused
        layer = call(MyFeedForward, "MyFeedForward", d, dff, dropout=dropout)
        call(layer, "MyFeedForward(...)", x, training=False)  # builds the weights
    shapes = [tuple(w.shape) for w in layer.get_weights()]
    expected = [tuple(w.shape) for w in ref.get_weights()]
    if shapes == expected[:2] or shapes == [(d, d), (d,)]:
        raise AssertionError(
            f"Your layer has one weight matrix and one bias, {shapes}: one Dense layer is one linear "
            "map. The FFN is two linear maps with a ReLU between them, W_1 (D, dff) then W_2 (dff, D).")
    if sorted(shapes) != sorted(expected):
        raise AssertionError(
            f"Your layer's weights have shapes {shapes}; expected W_1 (D, dff), b_1 (dff,), W_2 (dff, D) "
            f"and b_2 (D,), that is {expected} (here D = {d}, dff = {dff}), and no other weights.")
    by_shape = {tuple(w.shape): w for w in ref.get_weights()}  # the four shapes differ (D != dff)
    layer.set_weights([by_shape[shape] for shape in shapes])  # whatever order the layer lists them in
    return layer


def _dropout_rates(layer):
    """The rates of the keras.layers.Dropout layers inside the student's layer."""
    try:
        return [sub.rate for sub in layer._flatten_layers(include_self=False)
                if isinstance(sub, keras.layers.Dropout)]
    except Exception:
        return []


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
    layer = _student(MyFeedForward, ref, x)  # built on 4 axes: one instance need not serve several ranks
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
    rates = _dropout_rates(layer)
    if rates and 0.5 not in rates:
        raise AssertionError(
            f"Your layer was built with dropout=0.5, but its Dropout has rate {rates[0]}: create it with "
            "the layer's argument, keras.layers.Dropout(dropout), not a fixed rate.")
    other = _dropout_rates(_student(MyFeedForward, _reference(4, dropout=0.3), x, dropout=0.3))
    if other and 0.3 not in other:  # a rate of 0.5 typed in passes the check above
        raise AssertionError(
            f"Your layer was built with dropout=0.3, but its Dropout has rate {other[0]}: create it with "
            "the layer's argument, keras.layers.Dropout(dropout), not a fixed rate.")
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


@test_case(points=1)
def no_dropout_on_the_input(MyFeedForward):
    # Dropout on the inner activations is followed by a linear map only, so the mean of many
    # training=True outputs is the inference output (also when it acts just before the ReLU:
    # ReLU(2z) = 2 ReLU(z)). Dropout on the input x passes through the bias b_1 and the ReLU, which
    # bend the mean away from it (measured: relative gap about 0.01 against 0.14).
    ref = _reference(4, dropout=0.5)
    x = np.random.default_rng(5).normal(size=(4, 6, D)).astype("float32")
    layer = _student(MyFeedForward, ref, x, dropout=0.5)
    inference = to_numpy(call(layer, "MyFeedForward(...)", x, training=False), "Your output")
    copies = 4000  # one call on 4000 copies of x: 4000 independent dropout masks
    many = to_numpy(call(layer, "MyFeedForward(...)", np.tile(x, (copies, 1, 1)), training=True), "Your output")
    mean = many.reshape((copies,) + x.shape).mean(axis=0)
    gap = np.abs(mean - inference).mean() / np.abs(inference).mean()
    if gap > 0.05:
        raise AssertionError(
            f"Averaged over {copies} dropout masks, your training=True output is {gap:.0%} away from the "
            "inference output, which dropout on the inner activations (between W_1 and W_2) keeps on "
            "average: your dropout acts before the first linear map, probably on the input x. Apply "
            "it to the inner activations max(0, x W_1 + b_1) only.")
