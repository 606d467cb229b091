"""Exercise: the parameters of the package's and of Keras's multi-head attention, as formulas."""

import contextlib
from unittest import mock

import keras
import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call

OK_FORMAT = False
name = "ex-model-heads-free"
points = 2

# The layers the student's functions may not build: the counts are to be written as formulas.
REFUSED = (mt.MultiHeadAttention, keras.layers.MultiHeadAttention, mt.MinTransformer)


@contextlib.contextmanager
def _refused():
    """While the student's function runs, building any of REFUSED fails and is recorded."""
    used = []

    def refuse(self, *args, **kwargs):
        used.append(type(self).__name__)
        raise RuntimeError("this exercise asks you to write the count as a formula, without building layers")

    with contextlib.ExitStack() as stack:
        for cls in REFUSED:
            stack.enter_context(mock.patch.object(cls, "__init__", refuse))
        yield used


def _student(function, what, *args):
    with _refused() as used:
        try:
            value = call(function, what, *args)
        except AssertionError:
            if not used:
                raise
    if used:
        raise AssertionError(
            f"`{what}` builds {used[0]}: write the count as a formula in d_model, num_heads (and key_dim), "
            "without building a layer."
        )
    try:
        return float(value)
    except Exception:
        raise AssertionError(f"`{what}` must return a number, not {type(value).__name__}.") from None


def _built(layer, d_model, inputs):
    x = np.zeros((1, 3, d_model), dtype="float32")
    layer(*([x] * inputs))  # (query, key, value) for the package, (query, value) for Keras
    return layer.count_params()


# d_model = 16 with every h, then other widths: a count that ignores d_model fails there.
PACKAGE_CASES = [(16, 1), (16, 2), (16, 4), (16, 8), (24, 3), (40, 5), (24, 1)]
KERAS_CASES = [(16, 1, 16), (16, 2, 8), (16, 4, 16), (16, 8, 3), (24, 3, 8), (40, 5, 12), (24, 2, 24)]


def _side(got, expected):
    return "too large" if got > expected else "too small"


@test_case(points=1)
def package_attention(package_mha_params):
    expected = [_built(mt.MultiHeadAttention(d, h), d, 3) for d, h in PACKAGE_CASES]
    got = [_student(package_mha_params, "package_mha_params", d, h) for d, h in PACKAGE_CASES]
    at_16 = [g for (d, _), g in zip(PACKAGE_CASES, got) if d == 16]
    if len(set(at_16)) > 1:
        raise AssertionError(
            f"At d_model = 16 your counts for h = 1, 2, 4, 8 are {[int(g) for g in at_16]}: they change with "
            "h. The package projects all heads with one D x D matrix each for W^Q, W^K, W^V (then splits "
            "the result into h slices of width D/h), and W^O is D x D: the count does not depend on h."
        )
    if len(set(got)) == 1:
        raise AssertionError(
            "Your count is the same at d_model = 16, 24 and 40: the four projections are d_model x d_model "
            "matrices with biases, so the count grows with d_model."
        )
    known = [
        (lambda d: 4 * d * d, "You count 4 D^2: each of the four projections also has a bias of D entries."),
        (lambda d: 3 * (d * d + d),
         "You count 3(D^2 + D), the projections W^Q, W^K, W^V: the output projection W^O, applied to the "
         "concatenated heads, is a D x D matrix with a bias too."),
    ]
    for wrong, message in known:
        if all(np.isclose(g, wrong(d)) for (d, _), g in zip(PACKAGE_CASES, got)):
            raise AssertionError(message)
    for (d_model, num_heads), g, e in zip(PACKAGE_CASES, got, expected):
        if abs(g - e) > 0.5:
            raise AssertionError(
                f"package_mha_params({d_model}, {num_heads}) returns {g:,.0f}, {_side(g, e)} for "
                f"mt.MultiHeadAttention({d_model}, {num_heads}). Count each projection's matrix and bias, at "
                "this width."
            )


@test_case(points=1)
def keras_attention(keras_mha_params):
    expected = [_built(keras.layers.MultiHeadAttention(num_heads=h, key_dim=k), d, 2) for d, h, k in KERAS_CASES]
    for (d_model, num_heads, key_dim), e in zip(KERAS_CASES, expected):
        got = _student(keras_mha_params, "keras_mha_params", d_model, num_heads, key_dim)
        width = num_heads * key_dim  # all heads together
        wrong = [
            (4 * d_model * width,
             "You count the matrices only: Keras's projections have biases too (h x key_dim entries for "
             "each of Q, K, V; d_model for the output)."),
            (4 * (d_model * width + width),
             "The output projection maps the h x key_dim concatenated head outputs back to d_model: "
             "its bias has d_model entries, not h x key_dim."),
            (3 * (d_model * width + width) + d_model * d_model + d_model,
             "The output projection maps the h x key_dim concatenated head outputs back to d_model: "
             "its matrix is (h x key_dim) x d_model, not d_model x d_model."),
            (4 * (d_model * d_model + d_model),
             "That is the package's count: in Keras, key_dim is per head, so the projections are "
             "d_model x (h * key_dim), not d_model x d_model."),
            (4 * d_model * key_dim + 3 * key_dim + d_model,
             "key_dim is the width of EACH head in Keras: the projections are d_model x (h * key_dim), "
             "so the count grows with h."),
        ]
        for answer, message in wrong:
            if np.isclose(got, answer) and answer != e:
                raise AssertionError(f"keras_mha_params({d_model}, {num_heads}, {key_dim}): {message}")
        if abs(got - e) > 0.5:
            raise AssertionError(
                f"keras_mha_params({d_model}, {num_heads}, {key_dim}) returns {got:,.0f}, {_side(got, e)} for "
                f"keras.layers.MultiHeadAttention(num_heads={num_heads}, key_dim={key_dim}) on inputs of width "
                f"{d_model}. Count the matrices and the biases of the four projections, with d_model and "
                "h x key_dim where each belongs."
            )
