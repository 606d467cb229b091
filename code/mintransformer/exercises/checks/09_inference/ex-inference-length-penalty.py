"""Exercise: the length penalty of Wu et al. (2016), and which of two hypotheses it prefers.

The two hypotheses (length_a, log_p_a, length_b, log_p_b) are the student's own
(mt.exercises.parameters, drawn from STUDENT_ID); the winners and the tie are checked by the hidden
cases, when the notebook is graded.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, refusing, student_numbers, to_numpy

OK_FORMAT = False
name = "ex-inference-length-penalty"
points = 3

LENGTHS = np.array([1, 2, 5, 11, 50])
ALPHAS = (0.0, 0.6, 1.0, 2.0)
RULE = ("`my_length_penalty` calls mt.length_penalty: write the penalty from the equation yourself, as the "
        "exercise asks.")




def _power_tie(STUDENT_ID, length_penalty_numbers):
    """The known mistake of a tie for the penalty |Y|^alpha, which the exercise does not ask for."""
    n = student_numbers(name, STUDENT_ID, length_penalty_numbers)
    return np.log(n["log_p_b"] / n["log_p_a"]) / np.log(n["length_b"] / n["length_a"])


def _penalty(my_length_penalty, lengths, alphas):
    shown = lengths.tolist() if isinstance(lengths, np.ndarray) else lengths
    for alpha in alphas:
        with refusing([mt.length_penalty], my_length_penalty, RULE):
            got = call(my_length_penalty, "my_length_penalty", lengths, alpha)
        got = to_numpy(got, f"my_length_penalty(lengths, {alpha})")
        expected = mt.length_penalty(lengths, alpha)
        wrong = {
            "(5 + |Y|)^alpha without the division by (5 + 1)^alpha: lp(1) must be 1, so that a "
            "one-token hypothesis keeps its log-probability.": (5.0 + np.asarray(lengths)) ** alpha,
            "|Y|^alpha: Wu et al. add 5 to the length, (5 + |Y|)^alpha / (5 + 1)^alpha, so that the "
            "first tokens do not change the penalty much.": np.asarray(lengths, float) ** alpha,
            "the inverse, (6 / (5 + |Y|))^alpha: lp grows with the length.": ((5.0 + np.asarray(lengths)) / 6.0)
            ** -alpha,
        }
        for message, value in wrong.items():
            if not like(value, expected) and like(got, value):
                raise AssertionError(f"With alpha = {alpha} you computed {message}")
        close(got, expected, f"my_length_penalty({shown}, {alpha})", atol=1e-6,
              hint="lp(Y) = (5 + |Y|)^alpha / (5 + 1)^alpha, element by element for an array of lengths.")


@test_case(points=1)
def the_penalty(my_length_penalty, STUDENT_ID, length_penalty_numbers):
    student_numbers(name, STUDENT_ID, length_penalty_numbers)  # a notebook with no id scores nothing
    _penalty(my_length_penalty, LENGTHS, ALPHAS)


@test_case(points=1)
def the_winners(winners, STUDENT_ID, length_penalty_numbers):
    student_numbers(name, STUDENT_ID, length_penalty_numbers)
    # Only the form here: which hypothesis wins is checked when your notebook is graded.
    answered(winners, "winners")
    if not isinstance(winners, dict) or sorted(winners) != [0.0, 0.6, 1.0]:
        raise AssertionError('`winners` must be a dict with the keys 0.0, 0.6 and 1.0, e.g. {0.0: "A", ...}.')
    for alpha in (0.0, 0.6, 1.0):
        if str(winners[alpha]).strip().upper() not in ("A", "B"):
            raise AssertionError(f'winners[{alpha}] is {winners[alpha]!r}: write "A" or "B".')


@test_case(points=1)
def the_tie(tie_alpha, STUDENT_ID, length_penalty_numbers):
    # The form and a known mistake here: the value is checked when your notebook is graded.
    answered(tie_alpha, "tie_alpha")
    got = to_numpy(tie_alpha, "tie_alpha").reshape(-1)
    if got.size != 1:
        raise AssertionError("`tie_alpha` must be one number.")
    if abs(got[0] - _power_tie(STUDENT_ID, length_penalty_numbers)) < 1e-3:
        raise AssertionError("That is the tie for lp = |Y|^alpha: Wu et al.'s penalty adds 5 to each length "
                             "(and divides by (5 + 1)^alpha).")
    if not np.isfinite(got[0]) or got[0] <= 0:
        raise AssertionError(f"tie_alpha = {got[0]:.4g}: the tie is at a positive alpha (at alpha = 0 the penalty "
                             "is 1 for every length, and the two scores differ).")
