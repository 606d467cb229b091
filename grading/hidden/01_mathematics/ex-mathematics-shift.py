"""Hidden cases of ex-mathematics-shift: the softmaxes of the student's z and 2z, row_shift at other sizes,
and the three verdicts of bias_changes_weights.

Merged after the public check (mt.exercises.merged_source): _two_weights, _logits, _show and _verdicts are
its.
"""

import numpy as np
from keras import ops
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, to_numpy


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


@test_case(points=1, hidden=True)
def hidden_the_two_softmaxes(softmax_z, softmax_2z, STUDENT_ID, shift_numbers):
    z = _logits(STUDENT_ID, shift_numbers)  # noqa: F821 (the public check's)
    for value, name, logits, book in [(softmax_z, "softmax_z", z, (0.0, 1.0)),
                                      (softmax_2z, "softmax_2z", 2 * z, (0.0, 2.0))]:
        got = _two_weights(value, name)  # noqa: F821 (the public check's)
        expected = _softmax(logits)
        if not np.allclose(got, expected, atol=1e-3) and np.allclose(got, _softmax(np.array(book)), atol=1e-3):
            raise AssertionError(
                f"`{name}` is computed from the book's z = (0, 1), not from yours, z = {_show(z)}: "  # noqa: F821
                "use the numbers that your work cell prints."
            )
        close(got, expected, name, atol=1e-3, hint="Apply the definition of the softmax to your logits.")


@test_case(points=1, hidden=True)
def hidden_row_shift_at_other_sizes(row_shift, STUDENT_ID, shift_numbers):
    _logits(STUDENT_ID, shift_numbers)  # noqa: F821 (the public check's): the notebook's id
    rng = np.random.default_rng(7)
    for T, d_k in [(6, 3), (1, 32)]:
        Q, K, b_K = rng.normal(size=(T, d_k)), rng.normal(size=(5, d_k)), rng.normal(size=d_k)
        expected = ((Q @ (K + b_K).T - Q @ K.T) / np.sqrt(d_k))[:, 0]  # the same in every column
        got = to_numpy(call(row_shift, "row_shift", Q, b_K), "The result of `row_shift`")
        close(got.reshape(-1) if got.size == T else got, expected, f"row_shift(Q, b_K) for Q of shape {(T, d_k)}",
              atol=1e-6, hint="d_k is the length of each query, Q.shape[-1].")


@test_case(points=1, hidden=True)
def hidden_which_bias_changes_the_weights(bias_changes_weights, STUDENT_ID, shift_numbers):
    _logits(STUDENT_ID, shift_numbers)  # noqa: F821 (the public check's): the notebook's id
    answer = _verdicts(bias_changes_weights)  # noqa: F821 (the public check's)
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
    if answer != truth:
        raise AssertionError(
            "At least one of the three entries of bias_changes_weights is wrong. For each projection, write "
            "what its bias adds to the score of query t and key s (expand (x_t W^Q + b_Q) . (x_s W^K + b_K) for "
            "the query and key biases), and ask whether that term depends on the key s: the softmax of a row "
            "ignores a shift that is the same for every key (part 1)."
        )
