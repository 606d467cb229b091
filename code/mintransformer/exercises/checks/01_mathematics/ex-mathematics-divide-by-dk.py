"""Exercise: dividing the scores by d_k instead of sqrt(d_k) makes every row nearly uniform."""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, like, pair, to_numpy

OK_FORMAT = False
name = "ex-mathematics-divide-by-dk"
points = 2

D_KS = np.array([4.0, 64.0, 512.0])
SIZES = (16, 2, 100)


@test_case(points=1)
def variance_after_dividing_by_dk(var_divided_by_dk):
    got = np.array([float(to_numpy(call(var_divided_by_dk, "var_divided_by_dk", int(d)), "the variance"))
                    for d in D_KS])
    for wrong, message in [
        (1 / np.sqrt(D_KS), "it gives 1/sqrt(d_k). Dividing by a constant c divides the variance "
                            "by c^2: Var(q . k / d_k) = d_k / d_k^2."),
        (np.ones(3), "1 is the variance after dividing by sqrt(d_k); dividing by d_k divides "
                     "Var(q . k) = d_k by d_k^2."),
        (D_KS, "d_k is the variance without any scaling."),
        (1 / D_KS**2, "Var(q . k) is d_k, not 1: divided by d_k^2 it is d_k / d_k^2."),
    ]:
        if like(got, wrong, rtol=1e-6, atol=1e-12):
            raise AssertionError(f"var_divided_by_dk is wrong: {message}")
    close(got, 1 / D_KS, "var_divided_by_dk(d_k) for d_k = 4, 64, 512", rtol=1e-6, atol=1e-12,
          hint="Var(X / c) = Var(X) / c^2, and Var(q . k) = d_k.")



@test_case(points=1)
def the_limit_is_uniform(limits_divided_by_dk):
    for S in SIZES:
        result = call(limits_divided_by_dk, "limits_divided_by_dk", S)
        first, second = pair(result, "limits_divided_by_dk", "(mean largest weight, mean entropy)")
        got = np.array([float(to_numpy(x, "each limit")) for x in (first, second)])
        what = f"limits_divided_by_dk({S})"
        if like(got, [1.0, 0.0]):
            raise AssertionError(
                f"{what} = (1, 0) is a hard maximum, the limit WITHOUT scaling. Divided by d_k, the "
                "scores have variance 1/d_k -> 0: every logit tends to 0."
            )
        if like(got[1], 1.0):
            raise AssertionError(
                f"{what}: an entropy of 1 is the normalised entropy H / ln S. The task asks for the "
                "entropy itself, in nats: H = -sum p ln p."
            )
        if (np.log2(S) != 1 and like(got[1], np.log2(S))) or like(got[1], np.log10(S)):
            raise AssertionError(f"{what}: the entropy is in nats, with the natural logarithm (np.log).")
        close(got, [1 / S, np.log(S)], what, atol=1e-6,
              hint="When every logit tends to 0, the softmax tends to the uniform distribution "
              "over the S keys.")
