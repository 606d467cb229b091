"""Exercise: the limits of softmax(z / tau) as the temperature goes to 0 and to infinity."""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, like, to_numpy

OK_FORMAT = False
name = "ex-mathematics-temperature"
points = 2


def _softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


@test_case(points=1)
def cold(cold_limit):
    cases = [np.array([2.0, 1.0, 0.5, -1.0]),
             np.array([0.5, 0.49, -1.0]),       # a small gap: the limit is still one-hot
             np.array([1.0, 3.0, 3.0, 0.0]),    # a tie for the maximum
             np.array([-2.0, -2.0, -2.0])]      # all tied
    for z in cases:
        got = to_numpy(call(cold_limit, "cold_limit", z.copy()), "The result of `cold_limit`")
        top = z == z.max()
        expected = top / top.sum()
        what = f"cold_limit({z.tolist()})"
        if top.sum() > 1 and like(got, np.eye(len(z))[np.argmax(z)]):
            raise AssertionError(
                f"{what} is one-hot, but {int(top.sum())} entries share the maximum: each of them "
                "keeps a term e^0 = 1 in the limit, so each gets 1/M (here "
                f"1/{int(top.sum())}), and the others 0."
            )
        for tau in (0.1, 0.05, 0.01):
            if not like(expected, _softmax(z / tau), atol=1e-4) and like(got, _softmax(z / tau), atol=1e-4):
                raise AssertionError(
                    f"{what} is softmax(z / {tau}), a small temperature, not the limit: in the limit "
                    "every entry below the maximum gets exactly 0."
                )
        close(got, expected, what, atol=1e-6,
              hint="As tau -> 0+, (z_i - max z) / tau -> -infinity for every entry below the maximum.")


@test_case(points=1)
def hot(hot_limit):
    for z in (np.array([2.0, 1.0, 0.5, -1.0]), np.array([10.0, -3.0, 0.0, 7.0, 1.0])):
        got = call(hot_limit, "hot_limit", z.copy())
        close(got, np.full(len(z), 1 / len(z)), f"hot_limit({z.tolist()})", atol=1e-6,
              hint="As tau -> infinity every z_i / tau -> 0: what is the softmax of all zeros?")
