"""Exercise: the loss floor H(q') that label smoothing creates, and the logits that reach it."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, to_numpy

OK_FORMAT = False
name = "ex-training-floor"
points = 2

CASES = [(61, 0.1), (29, 0.1), (8, 0.3), (37_000, 0.1)]  # the date and reversal vocabularies, and others


def _entropy(a, b, V):
    """H of a target with a on the correct token and b on each of the V - 1 others."""
    return -a * np.log(a) - (V - 1) * b * np.log(b)


def _floor(V, eps):
    """The package's loss at its optimum: logits log q' against the smoothed target."""
    q = np.full(V, eps / V)
    q[3] += 1 - eps  # label 3: id 0 is the pad, which the loss leaves out
    return float(mt.masked_loss(np.array([[3]]), np.log(q)[None, None].astype("float32"), label_smoothing=eps))


def _number(function, name, V, eps):
    value = to_numpy(call(function, name, V, eps), f"{name}({V}, {eps})")
    if value.size != 1:
        raise AssertionError(f"{name}({V}, {eps}) must be one number; it has shape {value.shape}.")
    return float(value.reshape(()))


@test_case(points=1)
def floor(smoothing_floor):
    for V, eps in CASES:
        got = _number(smoothing_floor, "smoothing_floor", V, eps)
        expected = _floor(V, eps)
        a, b = 1 - eps + eps / V, eps / V
        wrong = [
            (_entropy(1 - eps, eps / (V - 1), V),
             "You give the correct token 1 - eps and spread eps over the V - 1 others. In the paper's "
             "smoothing (and Keras's) eps/V goes to EVERY token, the correct one included: "
             "q'(y) = 1 - eps + eps/V, q'(k) = eps/V for k != y."),
            (_entropy(1 - eps, eps / V, V),
             "You give the correct token 1 - eps: it also receives its share eps/V, so q'(y) = 1 - eps + eps/V "
             "(your target sums to 1 - eps/V, not 1)."),
            (_entropy(1.0, eps / V, V),
             "You keep the one-hot 1 on the correct token and add eps/V everywhere: the one-hot part is scaled "
             "by 1 - eps, or the target sums to more than 1."),
            (-a * np.log(a) - b * np.log(b),
             "You count one other token: each of the V - 1 other tokens contributes -b log b."),
            (expected / np.log(2), "You use log base 2: the loss is in nats, natural logarithms."),
            (0.0, "With label smoothing the floor is not 0: even p = q' costs H(q')."),
        ]
        for answer, message in wrong:
            if np.isclose(got, answer, rtol=1e-4, atol=1e-6) and not np.isclose(expected, answer, rtol=1e-4):
                raise AssertionError(f"smoothing_floor({V}, {eps}): {message}")
        close(got, expected, f"smoothing_floor({V}, {eps})", atol=1e-5, rtol=1e-4,
              hint="H(q') = -sum over the V tokens of q'(k) log q'(k), with the smoothed target q' of equation "
                   "(eq-training-smoothing): the correct token and the V - 1 others.")


@test_case(points=1)
def gap(logit_gap):
    for V, eps in CASES:
        got = _number(logit_gap, "logit_gap", V, eps)
        a, b = 1 - eps + eps / V, eps / V
        expected = np.log(a / b)
        wrong = [
            (np.log((1 - eps) * V / eps),
             "You give the correct token a probability of 1 - eps at the optimum: it also receives its share "
             "eps/V of the smoothing."),
            (np.log((1 - eps) * (V - 1) / eps),
             "You spread eps over the V - 1 other tokens: in the paper's smoothing each token, the correct "
             "one included, gets eps/V."),
            (a / b, "Logits are log-probabilities up to a constant: the gap between two logits is not the ratio "
                    "of the two probabilities."),
            (np.log10(a / b), "Use the natural logarithm: softmax exponentiates with e."),
        ]
        for answer, message in wrong:
            if np.isclose(got, answer, rtol=1e-4) and not np.isclose(expected, answer, rtol=1e-4):
                raise AssertionError(f"logit_gap({V}, {eps}): {message}")
        close(got, expected, f"logit_gap({V}, {eps})", atol=1e-4, rtol=1e-4,
              hint="At the optimum softmax(z) = q': what does that make each logit, up to a constant?")
