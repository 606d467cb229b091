"""Hidden cases of ex-inference-length-penalty: the penalty on other lengths and alphas, and the winners and
the tie, which the public check no longer holds.

Merged after the public check (mt.exercises.merged_source), so its helpers (_penalty, name) are in scope.
The two hypotheses are the student's own (mt.exercises.parameters, drawn from STUDENT_ID).
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import student_numbers, to_numpy


@test_case(points=1, hidden=True)
def hidden_other_lengths_and_alphas(my_length_penalty, STUDENT_ID, length_penalty_numbers):
    student_numbers(name, STUDENT_ID, length_penalty_numbers)  # noqa: F821 (the public check's name)
    _penalty(my_length_penalty, 7, (0.25, 3.0))  # noqa: F821 (the public check's): one length, a number
    _penalty(my_length_penalty, np.array([[1, 3], [20, 100]]), (1.5,))  # noqa: F821: a 2-D array


def _score(log_p, length, alpha):
    return log_p / mt.length_penalty(length, alpha)


@test_case(points=1, hidden=True)
def hidden_the_winners(winners, STUDENT_ID, length_penalty_numbers):
    n = student_numbers(name, STUDENT_ID, length_penalty_numbers)  # noqa: F821 (the public check's name)
    right = {alpha: "A" if _score(n["log_p_a"], n["length_a"], alpha) > _score(n["log_p_b"], n["length_b"], alpha)
             else "B" for alpha in (0.0, 0.6, 1.0)}
    try:
        given = {alpha: str(winners[alpha]).strip().upper() for alpha in right}
    except (TypeError, KeyError, IndexError):
        given = None
    if given != right:  # one message whatever is wrong: naming the wrong alpha would name its winner
        raise AssertionError(
            "At least one of the three winners is wrong. For each alpha, compare the scores "
            "s(Y) = log P(Y) / lp(|Y|) of both hypotheses: divide by the penalty (do not multiply), and the "
            "higher score (the one closer to 0) wins."
        )


@test_case(points=1, hidden=True)
def hidden_the_tie(tie_alpha, STUDENT_ID, length_penalty_numbers):
    n = student_numbers(name, STUDENT_ID, length_penalty_numbers)  # noqa: F821
    # s(A) = s(B): log P(A) ((5 + |B|) / (5 + |A|))^alpha = log P(B)
    tie = np.log(n["log_p_b"] / n["log_p_a"]) / np.log((5 + n["length_b"]) / (5 + n["length_a"]))
    try:
        got = float(to_numpy(tie_alpha, "tie_alpha").reshape(-1)[0])
    except (AssertionError, IndexError):
        got = np.nan
    if abs(got * tie - 1) < 1e-3:
        raise AssertionError("You inverted one of the two ratios, of the penalties or of the log-probabilities: "
                             "write s(A) = s(B) again and solve it for alpha.")
    if not abs(got - tie) <= 1e-3:
        raise AssertionError("tie_alpha is not the alpha for which s(A) = s(B): write both scores with the penalty "
                             "and solve for alpha; give it to 3 decimals.")
