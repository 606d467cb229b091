"""Chapter 1's checks reject the wrong answers they are meant to catch, with the right message.

The reference solutions are run by nbval (the chapter's check cells must print "passed") and by
tests/test_editions.py (the instructor's edition grades to full marks).
"""

import numpy as np
import pytest
from keras import ops

import tensorflow as tf

import mintransformer as mt
from exercise_messages import assert_hides, shown_lines_that_compute, assert_same_message
from public_check_contents import assert_public_check_hides, assert_tuned_answer_caught, hidden_path

CHAPTER = "01_mathematics"


def check(label, **env):
    env.setdefault("STUDENT_ID", "")  # the book's numbers (ex-mathematics-shift has per-student ones)
    result = mt.exercises.run_check(CHAPTER, label, env)
    return result.passed_all, result.summary()


def graded(label, **env):
    """The check as the instructor grades it: public and hidden cases (grading/hidden/)."""
    env.setdefault("STUDENT_ID", "")
    result = mt.exercises.run_check(CHAPTER, label, env, hidden=hidden_path(CHAPTER, label))
    return result.passed_all, result.summary()


def stub(*args, **kwargs):
    raise NotImplementedError


# The reference answers, as in the chapter's solutions.
def stable_softmax(z, axis=-1):
    z = np.asarray(z, dtype="float64")
    m = np.max(z, axis=axis, keepdims=True)
    e = np.exp(z - np.where(np.isneginf(m), 0.0, m))
    total = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def finite_softmax(z, axis=-1):  # the chapter's softmax: right for finite logits, nan for a slice of -inf
    z = np.asarray(z)
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


_rng = np.random.default_rng(2)
Q_SAMPLE, K_SAMPLE = 2.0 * _rng.standard_normal((2, 20000, 256))
RATIO = float(np.var(np.sum(Q_SAMPLE * K_SAMPLE, axis=-1)) / (256 * 2.0**4))


def fixed_attention(Q, K, V):
    weights = stable_softmax(Q @ K.T / np.sqrt(K.shape[-1]))
    return weights @ V, weights


RIGHT = {
    "ex-mathematics-softmax": {"stable_softmax": stable_softmax},
    "ex-mathematics-shift": {
        "softmax_z": stable_softmax(np.array([0.0, 1.0])),
        "softmax_2z": stable_softmax(np.array([0.0, 2.0])),
        "row_shift": lambda Q, b_K: Q @ b_K / np.sqrt(Q.shape[-1]),
        "bias_changes_weights": {"query": True, "key": False, "value": False},
    },
    "ex-mathematics-temperature": {
        "cold_limit": lambda z: (z == z.max()) / (z == z.max()).sum(),
        "hot_slope": lambda z: (z - z.mean()) / len(z),
    },
    "ex-mathematics-variance": {
        "dot_variance": lambda d_k, sigma: d_k * sigma**4,
        "scaled_dot_variance": lambda d_k, sigma: sigma**4,
        "q_sample": Q_SAMPLE,
        "k_sample": K_SAMPLE,
        "sample_ratio": RATIO,
    },
    "ex-mathematics-divide-by-dk": {
        "var_divided_by_dk": lambda d_k: 1 / d_k,
        "limits_divided_by_dk": lambda S: (1 / S, np.log(S)),
    },
    "ex-mathematics-fix-sum-index": {"fixed_attention": fixed_attention},
    "ex-mathematics-permutation": {"predict_reversed": lambda out, A: (out[::-1], A[::-1, ::-1])},
}


def with_(label, **changes):
    """The right answers of ``label``, with some of them replaced."""
    return {**RIGHT[label], **changes}


def test_every_check_has_its_right_answers_here():
    assert sorted(RIGHT) == mt.exercises.labels(CHAPTER)


@pytest.mark.parametrize("label", sorted(RIGHT))
def test_the_right_answers_pass(label):
    passed, text = graded(label, **RIGHT[label])
    assert passed, text


@pytest.mark.parametrize("label", sorted(RIGHT))
def test_blank_answers_fail_and_say_so(label):
    passed, text = check(label)  # nothing defined
    assert not passed and "is not defined" in text
    placeholders = {name: stub if callable(value) else ... for name, value in RIGHT[label].items()}
    passed, text = check(label, **placeholders)
    assert not passed and ("still `...`" in text or "NotImplementedError" in text), text
    assert "Test case passed" not in text, text  # every case fails on a blank answer


# ---------------------------------------------------------------- stable softmax
def naive_softmax(z, axis=-1):
    with np.errstate(all="ignore"):
        e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def global_max_softmax(z, axis=-1):
    e = np.exp(z - np.max(z))
    return e / np.sum(e, axis=axis, keepdims=True)


def axis_ignored(z, axis=-1):
    return stable_softmax(z)


def no_keepdims(z, axis=-1):
    e = np.exp(z - np.max(z, axis=axis))
    return e / np.sum(e, axis=axis, keepdims=True)


def in_place(z, axis=-1):
    z -= np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def columns(z, axis=-1):
    return stable_softmax(z, axis=0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("wrong,message", [
    (naive_softmax, "the formula as written"),
    (global_max_softmax, "largest entry of the whole array"),
    (axis_ignored, "use the `axis` argument"),
    (no_keepdims, "keepdims=True"),
    (in_place, "changed the array it was given"),
    (columns, "you normalised along axis 0"),
])
def test_softmax_rejects_the_known_mistakes(wrong, message):
    passed, text = check("ex-mathematics-softmax", stable_softmax=wrong)
    assert not passed and message in text, text


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("wrong,message", [
    (finite_softmax, "the slice whose entries are all -inf gives nan"),
    (lambda z, axis=-1: finite_softmax(np.where(np.isneginf(z), -1e9, z), axis),
     "gets weights that are not 0"),
    (lambda z, axis=-1: np.nan_to_num(finite_softmax(z, axis), nan=1.0 / np.shape(z)[axis]),
     "gets weights that are not 0"),
])
def test_softmax_names_the_mistakes_on_blocked_slices(wrong, message):
    passed, text = check("ex-mathematics-softmax", stable_softmax=wrong)
    assert not passed and message in text, text
    result = mt.exercises.run_check(CHAPTER, "ex-mathematics-softmax", {"stable_softmax": wrong})
    assert result.score == 4, text  # only the case with -inf fails


def keras_softmax(z, axis=-1):  # the setup cell's helper
    return ops.convert_to_numpy(ops.softmax(ops.convert_to_tensor(z, dtype="float64"), axis=axis))


def package_softmax(z, axis=-1):  # the weights of the package's attention: one query of 1, the logits as keys
    zt = np.moveaxis(np.asarray(z, dtype="float64"), axis, -1)
    q, k, v = np.ones(zt.shape[:-1] + (1, 1)), zt[..., None], np.ones(zt.shape + (1,))
    return np.moveaxis(ops.convert_to_numpy(mt.scaled_dot_product_attention(q, k, v)[1])[..., 0, :], -1, axis)


def test_the_package_softmax_is_a_softmax():
    z = np.random.default_rng(0).normal(size=(3, 4))
    assert np.allclose(package_softmax(z, axis=0), stable_softmax(z, axis=0))


@pytest.mark.parametrize("wrong", [
    keras_softmax,
    ops.softmax,
    package_softmax,
    lambda z, axis=-1: ops.convert_to_numpy(tf.nn.softmax(z, axis=axis)),
    lambda z, axis=-1: np.nan_to_num(keras_softmax(z, axis)),
])
def test_softmax_refuses_a_library_softmax(wrong):
    passed, text = check("ex-mathematics-softmax", stable_softmax=wrong)
    assert not passed and "calls a library softmax" in text, text
    assert "Test case passed" not in text, text
    assert np.allclose(keras_softmax(np.zeros(2)), 0.5)  # and the library works again afterwards


def test_softmax_names_keepdims_on_a_square_matrix():
    passed, text = check("ex-mathematics-softmax", stable_softmax=lambda z, axis=-1: (
        no_keepdims(z, axis) if np.shape(z) == (3, 3) else stable_softmax(z, axis)))
    assert not passed and "a square matrix hides it" in text, text


# ---------------------------------------------------------------- shift
def test_shift_rejects_doubling_as_a_shift():
    same = stable_softmax(np.array([0.0, 1.0]))
    passed, text = check("ex-mathematics-shift", **with_("ex-mathematics-shift", softmax_2z=same))
    assert not passed and "doubling the logits is not adding a constant" in text, text


@pytest.mark.parametrize("wrong,message", [
    (lambda Q, b_K: Q @ b_K / np.sqrt(2), "sqrt(2), the d_k of the example"),
    (lambda Q, b_K: Q @ b_K / np.sqrt(Q.shape[0]), "the number of queries"),
    (lambda Q, b_K: Q @ b_K / Q.shape[-1], "divides by d_k; the scores are divided by sqrt(d_k)"),
])
def test_shift_names_the_wrong_d_k(wrong, message):
    passed, text = check("ex-mathematics-shift", **with_("ex-mathematics-shift", row_shift=wrong))
    assert not passed and message in text, text


def test_shift_accepts_d_k_from_the_bias():
    passed, text = graded("ex-mathematics-shift", **with_(
        "ex-mathematics-shift", row_shift=lambda Q, b_K: Q @ b_K / np.sqrt(len(b_K))))
    assert passed, text


def test_shift_rejects_the_unscaled_row_shift():
    passed, text = check("ex-mathematics-shift",
                         **with_("ex-mathematics-shift", row_shift=lambda Q, b_K: Q @ b_K))
    assert not passed and "divided by sqrt(d_k) too" in text, text


def test_shift_says_the_same_whichever_bias_is_wrong():
    """A True/False answer: a message that named the wrong entry would name the right one."""
    right = {"query": True, "key": False, "value": False}
    wrongs = [dict(right, **{role: not right[role]}) for role in right]  # one entry wrong
    wrongs += [{role: not value for role, value in right.items()}, dict(right, query=False, key=True)]
    texts = []
    for answers in wrongs:
        passed, text = graded("ex-mathematics-shift", **with_("ex-mathematics-shift", bias_changes_weights=answers))
        assert not passed and "At least one of the three entries" in text, text
        assert "change the weights" not in text and "changes the weights" not in text, text
        texts.append(text)
    assert_same_message(texts)


def test_shift_wants_booleans_in_a_dict():
    passed, text = check("ex-mathematics-shift", **with_(
        "ex-mathematics-shift", bias_changes_weights={"query": ..., "key": False, "value": False}))
    assert not passed and "must be True or False" in text, text
    passed, text = check("ex-mathematics-shift", **with_("ex-mathematics-shift", bias_changes_weights=[True]))
    assert not passed and "must be a dict" in text, text



def _shift_id(test):
    """The first drawn id whose z passes ``test`` (z of s000, s001, ...), and that z as an array."""
    for i in range(100):
        z = np.array(mt.exercises.parameters("ex-mathematics-shift", f"s{i:03d}")["z"], dtype="float64")
        if test(z):
            return f"s{i:03d}", z
    raise AssertionError("no id draws such a z")


def test_shift_checks_each_students_own_logits():
    student_id, z = _shift_id(lambda z: z[0] > z[1] and z[0] - z[1] != 1)  # the larger logit first
    numbers = mt.exercises.parameters("ex-mathematics-shift", student_id)
    own = dict(RIGHT["ex-mathematics-shift"], softmax_z=stable_softmax(z), softmax_2z=stable_softmax(2 * z),
               STUDENT_ID=student_id, shift_numbers=numbers)
    passed, text = graded("ex-mathematics-shift", **own)
    assert passed, text
    # The book's softmaxes, for z = (0, 1): the hidden case says whose they are, and not the student's values.
    passed, text = graded("ex-mathematics-shift", **dict(own, softmax_z=RIGHT["ex-mathematics-shift"]["softmax_z"]))
    assert not passed and "computed from the book's z = (0, 1)" in text, text
    assert_hides(text, stable_softmax(z), stable_softmax(2 * z))
    # The public check's messages name the student's logits: 2z, and the entry of the larger logit (the first).
    passed, text = check("ex-mathematics-shift", **dict(own, softmax_2z=stable_softmax(z)))
    assert not passed and "2z = (%g, %g)" % tuple(2 * z) in text, text
    passed, text = check("ex-mathematics-shift", **dict(own, softmax_2z=stable_softmax(z)[::-1]))
    assert not passed and "the larger logit (entry 0 of z = (%g, %g))" % tuple(z) in text, text

# ---------------------------------------------------------------- temperature
def test_temperature_rejects_one_hot_on_a_tie():
    passed, text = check("ex-mathematics-temperature", **with_(
        "ex-mathematics-temperature", cold_limit=lambda z: np.eye(len(z))[np.argmax(z)]))
    assert not passed and "share the maximum" in text, text


def test_temperature_rejects_a_small_temperature_for_the_limit():
    passed, text = check("ex-mathematics-temperature", **with_(
        "ex-mathematics-temperature", cold_limit=lambda z: stable_softmax(z / 0.01)))
    assert not passed and "a small temperature, not the limit" in text, text


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("tau", [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10])
def test_temperature_rejects_any_small_temperature(tau):
    passed, text = check("ex-mathematics-temperature", **with_(
        "ex-mathematics-temperature", cold_limit=lambda z: stable_softmax(z / tau)))
    assert not passed and "a small temperature, not the limit" in text, text


def test_temperature_rejects_the_unnormalised_tie_mask():
    passed, text = check("ex-mathematics-temperature", **with_(
        "ex-mathematics-temperature", cold_limit=lambda z: (z == z.max()).astype(float)))
    assert not passed and "its limit, sum to 1" in text, text


def test_temperature_rejects_near_ties_as_ties():
    def tolerant(z):
        top = np.isclose(z, z.max())
        return top / top.sum()

    passed, text = check("ex-mathematics-temperature", **with_("ex-mathematics-temperature", cold_limit=tolerant))
    assert not passed and "close to the maximum but not equal to it" in text, text


@pytest.mark.parametrize("cold_limit", [
    lambda z: np.where(z == np.max(z), 1.0, 0.0) / np.count_nonzero(z == np.max(z)),
    lambda z: [1 / np.sum(z == max(z)) if v == max(z) else 0.0 for v in z],
    lambda z: ops.convert_to_tensor((z == z.max()) / (z == z.max()).sum()),
])
def test_temperature_accepts_other_correct_cold_limits(cold_limit):
    passed, text = graded("ex-mathematics-temperature", **with_("ex-mathematics-temperature", cold_limit=cold_limit))
    assert passed, text


@pytest.mark.parametrize("wrong,message", [
    (lambda z: np.full(len(z), 1 / len(z)), "is 1/S, the limit itself"),
    (lambda z: z / len(z), "your deviations do not sum to 0"),
    (lambda z: z - z.mean(), "points the right way (your deviations sum to 0) but has the wrong size"),
    (lambda z: 1e3 * (stable_softmax(z / 1e3) - 1 / len(z)), "close but not exact"),
    (lambda z: np.zeros(len(z)), "Expand e^(z_i / tau)"),
])
def test_temperature_names_the_wrong_hot_slopes(wrong, message):
    passed, text = graded("ex-mathematics-temperature", **with_("ex-mathematics-temperature", hot_slope=wrong))
    assert not passed and message in text, text


# ---------------------------------------------------------------- variance
@pytest.mark.parametrize("wrong,message", [
    (lambda d_k, sigma: d_k * sigma**2, "it grows like sigma^2, as if only one"),
    (lambda d_k, sigma: d_k, "does not depend on sigma"),
    (lambda d_k, sigma: np.sqrt(d_k) * sigma**2, "that is the standard deviation"),
    (lambda d_k, sigma: d_k**2 * sigma**4, "not d_k^2 times"),
])
def test_variance_names_the_wrong_formulas(wrong, message):
    passed, text = graded("ex-mathematics-variance", **with_("ex-mathematics-variance", dot_variance=wrong))
    assert not passed and message in text, text


@pytest.mark.parametrize("wrong,message", [
    (lambda d_k, sigma: 1.0, "holds only for sigma = 1"),
    (lambda d_k, sigma: np.sqrt(d_k) * sigma**4, "divides the variance by c^2"),
    (lambda d_k, sigma: d_k * sigma**4, "before dividing by sqrt(d_k)"),
    (lambda d_k, sigma: sigma**2, "it grows like sigma^2; redo the variance of one term"),
])
def test_variance_names_the_wrong_scaled_formulas(wrong, message):
    passed, text = graded("ex-mathematics-variance", **with_("ex-mathematics-variance", scaled_dot_variance=wrong))
    assert not passed and message in text, text


@pytest.mark.parametrize("changes,message", [
    (dict(sample_ratio=4 * RATIO), "off by a power of sigma"),
    (dict(sample_ratio=16 * RATIO), "off by a power of sigma"),
    (dict(sample_ratio=0.5), "within 0.05 of 1"),
    (dict(sample_ratio="about one"), "must be an array or a tensor of numbers"),
    (dict(sample_ratio=1.0), "do not type it in"),  # 1.0 typed in: the samples give another ratio
    (dict(q_sample=2 * Q_SAMPLE), "does not look like components of mean 0 and standard deviation sigma = 2"),
    (dict(q_sample=Q_SAMPLE[:100]), "has shape (100, 256)"),
    (dict(k_sample=Q_SAMPLE), "the same array"),
    (dict(q_sample=...), "`q_sample` is still `...`"),
])
def test_variance_measures_the_ratio_on_the_students_samples(changes, message):
    passed, text = check("ex-mathematics-variance", **with_("ex-mathematics-variance", **changes))
    assert not passed and message in text, text
    for formula in ("sigma^4", "d_k sigma", "= d_k", "s**4"):
        assert formula not in text, text  # the messages never state the formula


# ---------------------------------------------------------------- divide by d_k
@pytest.mark.parametrize("wrong,message", [
    (lambda d_k: 1 / np.sqrt(d_k), "it scales like the standard deviation"),
    (lambda d_k: 1.0, "it is the same for every d_k"),
    (lambda d_k: d_k, "the variance without any scaling"),
    (lambda d_k: 1 / d_k**2, "starts from a variance of 1 for q . k itself"),
])
def test_divide_by_dk_names_the_wrong_variances(wrong, message):
    passed, text = check("ex-mathematics-divide-by-dk",
                         **with_("ex-mathematics-divide-by-dk", var_divided_by_dk=wrong))
    assert not passed and message in text, text
    assert "d_k^2" not in text and "1/d_k" not in text and "uniform" not in text, text  # no answer given
    assert "1 / D_KS" not in text, text  # nor in the line of the check that otter shows


@pytest.mark.parametrize("wrong,message", [
    (lambda S: (1.0, 0.0), "a hard maximum, the limit WITHOUT scaling"),
    (lambda S: (1 / S, np.log2(S)), "in nats"),
    (lambda S: (1 / S, 1.0), "the normalised entropy H / ln S"),
    (lambda S: 1 / S, "must return a pair (mean largest weight, mean entropy); it returned a float"),
    (lambda S: (1 / S, np.log(S), 0.0), "it returned a tuple of 3 items"),
    (lambda S: {"weight": 1 / S}, "it returned a dict"),
])
def test_divide_by_dk_names_the_wrong_limits(wrong, message):
    passed, text = check("ex-mathematics-divide-by-dk",
                         **with_("ex-mathematics-divide-by-dk", limits_divided_by_dk=wrong))
    assert not passed and message in text, text
    assert "1/d_k" not in text and "uniform" not in text and "np.log(S)" not in text, text  # no answer given


# ---------------------------------------------------------------- find and fix the bug
def sketch_attention(Q, K, V):
    """The buggy code of the exercise: eq2_3 typed in with the sketch's index names."""
    n, d_k = K.shape
    alpha = np.zeros((Q.shape[0], n))
    for i in range(Q.shape[0]):
        for j in range(n):
            denominator = 0.0
            for j in range(n):  # noqa: B007 - the bug under test
                denominator += np.exp(Q[i] @ K[j] / np.sqrt(d_k))
            alpha[i, j] = np.exp(Q[i] @ K[j] / np.sqrt(d_k)) / denominator
    return alpha @ V, alpha


def each_entry_over_itself(Q, K, V):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    weights = np.exp(scores) / np.exp(scores)
    return weights @ V, weights


def over_the_queries(Q, K, V):
    weights = stable_softmax(Q @ K.T / np.sqrt(K.shape[-1]), axis=0)
    return weights @ V, weights


def unscaled(Q, K, V):
    weights = stable_softmax(Q @ K.T)
    return weights @ V, weights


def naive(Q, K, V):  # the index fixed, the formula's exp kept: overflows near +1000
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    weights = naive_softmax(scores)
    return weights @ V, weights


def shifted_by_the_global_max(Q, K, V):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    weights = global_max_softmax(scores)
    return weights @ V, weights


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("wrong,message", [
    (sketch_attention, "still the bug"),
    (each_entry_over_itself, "every weight is 1"),
    (over_the_queries, "you normalised over the queries"),
    (unscaled, "divide the scores by sqrt(d_k)"),
    (naive, "subtract each row's largest score before exp"),
    (shifted_by_the_global_max, "largest score of the whole matrix"),
])
def test_fix_rejects_the_sketch_and_the_half_fixes(wrong, message):
    passed, text = check("ex-mathematics-fix-sum-index", fixed_attention=wrong)
    assert not passed and message in text, text


def over_the_whole_matrix(Q, K, V):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    e = np.exp(scores - scores.max())
    weights = e / e.sum()
    return weights @ V, weights


def swapped(Q, K, V):
    output, weights = fixed_attention(Q, K, V)
    return weights, output


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("wrong,message", [
    (over_the_whole_matrix, "you normalised by the sum over the whole matrix"),
    (swapped, "the order is (output, weights)"),
    (lambda Q, K, V: fixed_attention(Q, K, V)[1], "it returned a NumPy array of shape (3, 4)"),
])
def test_fix_names_the_other_mistakes(wrong, message):
    passed, text = check("ex-mathematics-fix-sum-index", fixed_attention=wrong)
    assert not passed and message in text, text


@pytest.mark.parametrize("wrong", [
    lambda Q, K, V: mt.scaled_dot_product_attention(Q, K, V),
    lambda Q, K, V: tuple(ops.convert_to_numpy(t) for t in mt.scaled_dot_product_attention(Q, K, V)),
    lambda Q, K, V: (keras_softmax(Q @ K.T / np.sqrt(K.shape[-1])) @ V, keras_softmax(Q @ K.T / np.sqrt(K.shape[-1]))),
])
def test_fix_refuses_the_package_and_a_library_softmax(wrong):
    passed, text = check("ex-mathematics-fix-sum-index", fixed_attention=wrong)
    assert not passed and "calls the package's attention or a library softmax" in text, text
    assert "Test case passed" not in text, text


def test_fix_accepts_a_list():
    passed, text = graded("ex-mathematics-fix-sum-index",
                         fixed_attention=lambda Q, K, V: list(fixed_attention(Q, K, V)))
    assert passed, text


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_fix_passes_the_small_cases_with_the_naive_softmax_only_fails_the_large_one():
    result = mt.exercises.run_check(CHAPTER, "ex-mathematics-fix-sum-index", {"fixed_attention": naive})
    assert result.score == 2, result.summary()


def test_fix_reference_is_the_package():
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(3, 4)).astype("float32") for _ in range(3))
    out, w = fixed_attention(Q, K, V)
    ref_out, ref_w = mt.scaled_dot_product_attention(Q, K, V)
    assert np.allclose(w, ops.convert_to_numpy(ref_w), atol=1e-6)
    assert np.allclose(out, ops.convert_to_numpy(ref_out), atol=1e-6)


# ---------------------------------------------------------------- permutation
@pytest.mark.parametrize("wrong,message", [
    (lambda out, A: (out, A), "row t belongs to the token now at position t"),
    (lambda out, A: (out[::-1], A[::-1]), "reverse both axes"),
    (lambda out, A: (out[::-1], A), "both in the new order"),
    (lambda out, A: out[::-1], "must return a pair (output, weights); it returned a NumPy array of shape (5, 3)"),
    (lambda out, A: (out[::-1], A[:, ::-1]), "reversed the columns of the weights (the keys) but not the rows"),
    (lambda out, A: (out[::-1], A.T), "A.T swaps the queries and the keys"),
    (lambda out, A: (np.flip(out), np.flip(A)), "np.flip without an axis reverses every axis"),
    (lambda out, A: (A[::-1, ::-1], out[::-1]), "the order is (output, weights)"),
])
def test_permutation_names_the_wrong_predictions(wrong, message):
    passed, text = check("ex-mathematics-permutation", predict_reversed=wrong)
    assert not passed and message in text, text


@pytest.mark.parametrize("predict_reversed", [
    lambda out, A: [out[::-1], A[::-1, ::-1]],
    lambda out, A: (np.flip(out, axis=0), np.flip(A)),
])
def test_permutation_accepts_other_correct_answers(predict_reversed):
    passed, text = graded("ex-mathematics-permutation", predict_reversed=predict_reversed)
    assert passed, text


@pytest.mark.parametrize("limits", [
    lambda S: [1 / S, np.log(S)],
    lambda S: np.array([1 / S, np.log(S)]),
])
def test_divide_by_dk_accepts_a_list_or_an_array(limits):
    passed, text = graded("ex-mathematics-divide-by-dk",
                         **with_("ex-mathematics-divide-by-dk", limits_divided_by_dk=limits))
    assert passed, text


# ---------------------------------------------------------------- no message hands out the answer
def _hot_cases():
    return [np.array([2.0, 1.0, 0.5, -1.0]), np.array([10.0, -3.0, 0.0, 7.0, 1.0]), np.array([4.0, 4.0, 1.0])]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("label,changes,answers", [
    ("ex-mathematics-shift", dict(softmax_z=np.array([0.3, 0.7])), [stable_softmax(np.array([0.0, 1.0]))]),
    ("ex-mathematics-shift", dict(softmax_z=np.array([0.25, 0.75])), [stable_softmax(np.array([0.0, 1.0]))]),
    ("ex-mathematics-shift", dict(softmax_2z=np.array([0.1, 0.9])), [stable_softmax(np.array([0.0, 2.0]))]),
    ("ex-mathematics-shift", dict(row_shift=lambda Q, b_K: np.zeros(len(Q))), []),
    ("ex-mathematics-temperature", dict(hot_slope=lambda z: z - z.mean()),
     [(z - z.mean()) / len(z) for z in _hot_cases()]),
    ("ex-mathematics-temperature", dict(hot_slope=lambda z: 0.1 * z), [(z - z.mean()) / len(z) for z in _hot_cases()]),
    ("ex-mathematics-temperature", dict(cold_limit=lambda z: np.full(len(z), 0.3)), [1 / 3, 0.5]),
    ("ex-mathematics-variance", dict(dot_variance=lambda d_k, sigma: 3.3 * d_k), []),
    ("ex-mathematics-variance", dict(sample_ratio=0.93), [RATIO]),
    ("ex-mathematics-variance", dict(sample_ratio=1.04), [RATIO]),
    ("ex-mathematics-divide-by-dk", dict(var_divided_by_dk=lambda d_k: 0.7 / d_k), [1 / 4, 1 / 64, 1 / 512]),
    ("ex-mathematics-divide-by-dk", dict(limits_divided_by_dk=lambda S: (0.5, 1.5)),
     [1 / 16, np.log(16), 1 / 2, np.log(2), 1 / 100, np.log(100)]),
    ("ex-mathematics-fix-sum-index", dict(fixed_attention=lambda Q, K, V: fixed_attention(Q, K, V * 1.5)), []),
    ("ex-mathematics-permutation", dict(predict_reversed=lambda out, A: (out[::-1] * 1.1, A[::-1, ::-1])), []),
])
def test_no_message_hands_out_the_answer(label, changes, answers):
    """A wrong answer's message never prints an expected value (nor the expected entry of an array)."""
    passed, text = graded(label, **with_(label, **changes))
    assert not passed, text
    expected = list(answers)
    if label == "ex-mathematics-fix-sum-index":  # the expected output and weights of the check's first case
        rng = np.random.default_rng(0)
        Q, K, V = (rng.normal(size=shape).astype("float32") for shape in ((3, 8), (4, 8), (4, 3)))
        expected += list(fixed_attention(Q, K, V))
    if label == "ex-mathematics-permutation":
        rng = np.random.default_rng(0)
        X = rng.normal(size=(5, 6)).astype("float32")
        W_Q, W_K, W_V = (rng.normal(size=(6, d)).astype("float32") for d in (4, 4, 3))
        expected += list(fixed_attention(X[::-1] @ W_Q, X[::-1] @ W_K, X[::-1] @ W_V))
    if label == "ex-mathematics-variance" and "dot_variance" in changes:
        expected += [d_k * sigma**4 for d_k in (1, 16, 64, 256) for sigma in (0.5, 1.0, 2.0)]
    assert_hides(text, *expected)
    for formula in ("s**4", "1 / D_KS", "np.log(S)", "1 / S"):  # nor the line of the check that otter shows
        assert formula not in text, text


def test_no_line_that_otter_shows_computes_the_answer():
    assert not shown_lines_that_compute(CHAPTER)


# ---------------------------------------------------------------- hidden cases (grading/hidden/)
def _softmax_of_the_public_axes(z, axis=-1):
    """Right for the axes the public cases use (-1, 0 and 1); the last axis for any other."""
    return stable_softmax(z, axis if axis in (-1, 0, 1) else -1)


def _fixed_looked_up(Q, K, V):
    """The fix with the scale looked up for the public cases' d_k."""
    scale = {8: np.sqrt(8), 2: np.sqrt(2), 4: 2.0, 16: 4.0}[Q.shape[-1]]
    weights = stable_softmax(Q @ K.T / scale)
    return weights @ V, weights


def _cold_limit_ties_of_three(z):
    """Right while at most three entries share the maximum, as in the public cases."""
    top = z == z.max()
    return top / min(top.sum(), 3)


@pytest.mark.parametrize("label,changes", [
    ("ex-mathematics-softmax", dict(stable_softmax=_softmax_of_the_public_axes)),
    ("ex-mathematics-shift", dict(softmax_z=np.array([0.5, 0.5]))),
    ("ex-mathematics-shift", dict(bias_changes_weights={"query": False, "key": False, "value": False})),
    ("ex-mathematics-shift", dict(row_shift=lambda Q, b_K: Q @ b_K / np.sqrt(8))),
    ("ex-mathematics-temperature", dict(cold_limit=_cold_limit_ties_of_three)),
    ("ex-mathematics-temperature", dict(hot_slope=lambda z: (z - z.mean()) / max(len(z), 3))),
    ("ex-mathematics-variance", dict(dot_variance=lambda d_k, s: d_k * s**4 if d_k in (1, 16, 64, 256) else d_k)),
    ("ex-mathematics-divide-by-dk", dict(var_divided_by_dk=lambda d_k: {4: 1 / 4, 64: 1 / 64, 512: 1 / 512}[d_k])),
    ("ex-mathematics-divide-by-dk",
     dict(limits_divided_by_dk=lambda S: (1 / S, np.log(S) if S in (2, 16, 100) else 0))),
    ("ex-mathematics-fix-sum-index", dict(fixed_attention=_fixed_looked_up)),
    ("ex-mathematics-permutation", dict(predict_reversed=lambda out, A: (out[4::-1], A[4::-1, 4::-1]))),
])
def test_hidden_cases_catch_answers_tuned_to_the_public_ones(label, changes):
    assert_tuned_answer_caught(CHAPTER, label, **with_(label, **changes))


def test_public_checks_no_longer_hold_the_values_they_hid():
    right = RIGHT["ex-mathematics-shift"]
    assert_public_check_hides(CHAPTER, "ex-mathematics-shift", right["softmax_z"], right["softmax_2z"],
                              right["bias_changes_weights"],
                              spelled=["np.exp([0.0, 1.0])", "np.exp([0.0, 2.0])", "scaled_dot_product_attention",
                                       '"key": False'])
    # The formulas of the derivations: the public checks keep only their known wrong forms.
    for label, spelled in [
        ("ex-mathematics-variance", ["lambda d, s: d * s**4", "s**4 + 0 * d", "s**4)"]),
        ("ex-mathematics-divide-by-dk", ["1 / D_KS ", "1 / D_KS\n", "= 1 / D_KS", "1 / S, np.log(S)"]),
        ("ex-mathematics-temperature", ["top / M", "/ S\n", "(z - z.mean()) / S", "like(got, z - z.mean())"]),
    ]:
        assert_public_check_hides(CHAPTER, label, spelled=spelled)


@pytest.mark.parametrize("label,changes,message", [
    ("ex-mathematics-variance", dict(dot_variance=lambda d_k, sigma: -d_k * sigma**4), "a positive number"),
    ("ex-mathematics-divide-by-dk", dict(var_divided_by_dk=lambda d_k: 0.0), "a positive number"),
    ("ex-mathematics-divide-by-dk", dict(limits_divided_by_dk=lambda S: (2.0, np.log(S))), "lies in (0, 1]"),
    ("ex-mathematics-temperature", dict(cold_limit=lambda z: 0.5 * (z == z.max())), "sum to 1"),
    ("ex-mathematics-temperature", dict(hot_slope=lambda z: np.ones(len(z))), "do not sum to 0"),
    ("ex-mathematics-temperature", dict(hot_slope=lambda z: np.ones(len(z) + 1)), "one entry per logit"),
])
def test_public_formula_checks_still_catch_what_they_can(label, changes, message):
    passed, text = check(label, **with_(label, **changes))
    assert not passed and message in text, text


@pytest.mark.parametrize("changes,message", [
    (dict(softmax_z=np.array([0.7, 0.7])), "sum to 1"),
    (dict(softmax_z=np.array([0.2, 0.3, 0.5])), "has two"),
    (dict(softmax_2z=np.array([0.9, 0.1])), "the larger one gets more of the weight"),
    (dict(bias_changes_weights={"query": True, "key": "no", "value": False}), "must be True or False"),
])
def test_public_shift_check_still_catches_what_it_can(changes, message):
    passed, text = check("ex-mathematics-shift", **with_("ex-mathematics-shift", **changes))
    assert not passed and message in text, text
