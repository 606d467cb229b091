"""Exercise: the softmax ignores a shift, not a scale; a key bias does not change the weights."""

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, to_numpy

OK_FORMAT = False
name = "ex-mathematics-shift"
points = 3

SOFTMAX_Z = np.exp([0.0, 1.0]) / np.exp([0.0, 1.0]).sum()
SOFTMAX_2Z = np.exp([0.0, 2.0]) / np.exp([0.0, 2.0]).sum()


@test_case(points=1)
def doubling_is_not_a_shift(softmax_z, softmax_2z):
    answered(softmax_z, "softmax_z")
    answered(softmax_2z, "softmax_2z")
    close(softmax_z, SOFTMAX_Z, "softmax_z", atol=1e-3,
          hint="Apply the definition of the softmax to z = (0, 1).")
    if like(softmax_2z, SOFTMAX_Z, atol=1e-3):
        raise AssertionError(
            "softmax_2z equals softmax_z, but doubling the logits is not adding a constant: "
            "2z = (0, 2) stretches the gap between the logits (a temperature of 1/2)."
        )
    close(softmax_2z, SOFTMAX_2Z, "softmax_2z", atol=1e-3,
          hint="Apply the definition of the softmax to 2z = (0, 2).")


@test_case(points=1)
def key_bias_shifts_each_row(row_shift):
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(4, 8)), rng.normal(size=(5, 8))
    b_K = rng.normal(size=8)
    scores = Q @ K.T / np.sqrt(8)
    shifted = Q @ (K + b_K).T / np.sqrt(8)
    expected = (shifted - scores)[:, 0]  # the same in every column
    got = to_numpy(call(row_shift, "row_shift", Q, b_K), "The result of `row_shift`")
    if got.shape == (4, 1):
        got = got[:, 0]
    if like(got, Q @ b_K):
        raise AssertionError(
            "`row_shift` gives q_t . b_K, the shift of the unscaled scores: the scores are "
            "Q K^T / sqrt(d_k), so their shift is divided by sqrt(d_k) too."
        )
    if like(got, Q @ b_K / np.sqrt(2)):
        raise AssertionError(
            "`row_shift` divides by sqrt(2), the d_k of the example. Here Q has shape (4, 8): d_k is "
            "Q.shape[-1], so divide by np.sqrt(Q.shape[-1])."
        )
    if like(got, Q @ b_K / np.sqrt(Q.shape[0])):
        raise AssertionError(
            "`row_shift` divides by sqrt(4), the square root of the number of queries T = "
            "Q.shape[0]. d_k is the length of each query: Q.shape[-1]."
        )
    if like(got, Q @ b_K / Q.shape[-1]):
        raise AssertionError(
            "`row_shift` divides by d_k; the scores are divided by sqrt(d_k), and so is their shift."
        )
    close(got, expected, "row_shift(Q, b_K) for Q of shape (4, 8), one number per query", atol=1e-6,
          hint="Expand q_t . (k_s + b_K) / sqrt(d_k): the term that does not depend on s is the shift.")


@test_case(points=1)
def which_bias_changes_the_weights(bias_changes_weights):
    answered(bias_changes_weights, "bias_changes_weights")
    if not isinstance(bias_changes_weights, dict) or set(bias_changes_weights) != {"query", "key", "value"}:
        raise AssertionError(
            'bias_changes_weights must be a dict with the keys "query", "key" and "value", '
            'e.g. {"query": True, "key": True, "value": True}.'
        )
    for role, value in bias_changes_weights.items():
        if value is Ellipsis or not isinstance(value, (bool, np.bool_)):
            raise AssertionError(f'bias_changes_weights["{role}"] must be True or False, not {value!r}.')
    rng = np.random.default_rng(1)
    Q, K, V = (rng.normal(size=(3, 4)).astype("float32") for _ in range(3))
    b = rng.normal(size=4).astype("float32") * 3

    def weights(q, k, v):
        return ops.convert_to_numpy(mt.scaled_dot_product_attention(q, k, v)[1])

    base = weights(Q, K, V)
    truth = {"query": not np.allclose(weights(Q + b, K, V), base, atol=1e-4),
             "key": not np.allclose(weights(Q, K + b, V), base, atol=1e-4),
             "value": not np.allclose(weights(Q, K, V + b), base, atol=1e-4)}
    # One message whatever is wrong: for a True/False answer, naming the wrong entry names the right one.
    if any(bool(bias_changes_weights[role]) != truth[role] for role in ("query", "key", "value")):
        raise AssertionError(
            "At least one of the three entries of bias_changes_weights is wrong. For each projection, write "
            "what its bias adds to the score of query t and key s (expand (x_t W^Q + b_Q) . (x_s W^K + b_K) for "
            "the query and key biases), and ask whether that term depends on the key s: the softmax of a row "
            "ignores a shift that is the same for every key (part 1)."
        )
