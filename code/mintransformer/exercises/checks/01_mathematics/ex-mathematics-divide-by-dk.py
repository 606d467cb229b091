"""Exercise: dividing the scores by d_k instead of sqrt(d_k) makes every row nearly uniform.

The check catches known mistakes; the values themselves are hidden test cases (grading/hidden/), checked
when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, like, pair, to_numpy

OK_FORMAT = False
name = "ex-mathematics-divide-by-dk"
points = 2

D_KS = np.array([4.0, 64.0, 512.0])
SIZES = (16, 2, 100)


def _variances(var_divided_by_dk, d_ks):
    return np.array([float(to_numpy(call(var_divided_by_dk, "var_divided_by_dk", int(d)), "the variance"))
                     for d in d_ks])


def _limits(limits_divided_by_dk, S):
    result = call(limits_divided_by_dk, "limits_divided_by_dk", S)
    first, second = pair(result, "limits_divided_by_dk", "(mean largest weight, mean entropy)")
    return np.array([float(to_numpy(x, "each limit")) for x in (first, second)])


@test_case(points=1)
def variance_after_dividing_by_dk(var_divided_by_dk):
    got = _variances(var_divided_by_dk, D_KS)
    for wrong, message in [
        (1 / np.sqrt(D_KS), "it scales like the standard deviation, not the variance: dividing a random "
                            "variable by a constant c divides its variance by c^2, not by c."),
        (np.ones(3), "it is the same for every d_k, as it is after dividing by sqrt(d_k). Dividing by "
                     "d_k divides by a larger number."),
        (D_KS, "it is the variance without any scaling."),
        (1 / D_KS**2, "it starts from a variance of 1 for q . k itself. How does Var(q . k) grow with d_k "
                      "(the chapter's footnote 4)?"),
    ]:
        if like(got, wrong, rtol=1e-6, atol=1e-12):
            raise AssertionError(f"var_divided_by_dk is wrong: {message}")
    if not np.all(np.isfinite(got) & (got > 0)):
        raise AssertionError("var_divided_by_dk is wrong: a variance of a quantity that is not constant is a "
                             "positive number.")



@test_case(points=1)
def the_limit_is_uniform(limits_divided_by_dk):
    for S in SIZES:
        got = _limits(limits_divided_by_dk, S)
        what = f"limits_divided_by_dk({S})"
        if like(got, [1.0, 0.0]):
            raise AssertionError(
                f"{what} = (1, 0) is a hard maximum, the limit WITHOUT scaling. Use your variance of "
                "q . k / d_k: what happens to it, and so to the logits, as d_k grows?"
            )
        if like(got[1], 1.0):
            raise AssertionError(
                f"{what}: an entropy of 1 is the normalised entropy H / ln S. The task asks for the "
                "entropy itself, in nats: H = -sum p ln p."
            )
        if (np.log2(S) != 1 and like(got[1], np.log2(S))) or like(got[1], np.log10(S)):
            raise AssertionError(f"{what}: the entropy is in nats, with the natural logarithm (np.log).")
        if not (0 < got[0] <= 1 and got[1] >= 0):
            raise AssertionError(f"{what} is not a (largest weight, entropy) pair: a weight lies in (0, 1] and an "
                                 "entropy is at least 0.")
