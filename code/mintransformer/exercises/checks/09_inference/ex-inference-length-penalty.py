"""Exercise: the length penalty of Wu et al. (2016), and which of two hypotheses it prefers."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import answered, call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-inference-length-penalty"
points = 3

LENGTHS = np.array([1, 2, 5, 11, 50])
ALPHAS = (0.0, 0.6, 1.0, 2.0)
TIE = np.log(1.3) / np.log(1.4)  # 2.0 (14/10)^alpha = 2.6
RULE = ("`my_length_penalty` calls mt.length_penalty: write the penalty from the equation yourself, as the "
        "exercise asks.")


def _score(log_p, length, alpha):
    return log_p / mt.length_penalty(length, alpha)


@test_case(points=1)
def the_penalty(my_length_penalty):
    for alpha in ALPHAS:
        with refusing([mt.length_penalty], my_length_penalty, RULE):
            got = call(my_length_penalty, "my_length_penalty", LENGTHS, alpha)
        got = to_numpy(got, f"my_length_penalty(lengths, {alpha})")
        expected = mt.length_penalty(LENGTHS, alpha)
        wrong = {
            "(5 + |Y|)^alpha without the division by (5 + 1)^alpha: lp(1) must be 1, so that a "
            "one-token hypothesis keeps its log-probability.": (5.0 + LENGTHS) ** alpha,
            "|Y|^alpha: Wu et al. add 5 to the length, (5 + |Y|)^alpha / (5 + 1)^alpha, so that the "
            "first tokens do not change the penalty much.": LENGTHS.astype(float) ** alpha,
            "the inverse, (6 / (5 + |Y|))^alpha: lp grows with the length.": ((5.0 + LENGTHS) / 6.0) ** -alpha,
        }
        for message, value in wrong.items():
            if not like(value, expected) and like(got, value):
                raise AssertionError(f"With alpha = {alpha} you computed {message}")
        close(got, expected, f"my_length_penalty({LENGTHS.tolist()}, {alpha})", atol=1e-6,
              hint="lp(Y) = (5 + |Y|)^alpha / (5 + 1)^alpha, element by element for an array of lengths.")


@test_case(points=1)
def the_winners(winners):
    answered(winners, "winners")
    if not isinstance(winners, dict) or sorted(winners) != [0.0, 0.6, 1.0]:
        raise AssertionError('`winners` must be a dict with the keys 0.0, 0.6 and 1.0, e.g. {0.0: "A", ...}.')
    wrong = []
    for alpha in (0.0, 0.6, 1.0):
        a, b = _score(-2.0, 5, alpha), _score(-2.6, 9, alpha)
        right = "A" if a > b else "B"
        answer = str(winners[alpha]).strip().upper()
        if answer not in ("A", "B"):
            raise AssertionError(f'winners[{alpha}] is {winners[alpha]!r}: write "A" or "B".')
        wrong.append(answer != right)
    if any(wrong):  # one message whatever is wrong: naming the wrong alpha would name its winner
        raise AssertionError(
            "At least one of the three winners is wrong. For each alpha, compare the scores "
            "s(Y) = log P(Y) / lp(|Y|) of both hypotheses: divide by the penalty (do not multiply), and the "
            "higher score (the one closer to 0) wins."
        )


@test_case(points=1)
def the_tie(tie_alpha):
    answered(tie_alpha, "tie_alpha")
    got = to_numpy(tie_alpha, "tie_alpha").reshape(-1)
    if got.size != 1:
        raise AssertionError("`tie_alpha` must be one number.")
    if abs(got[0] - np.log(1.3) / np.log(1.8)) < 1e-3:
        raise AssertionError("That is the tie for lp = |Y|^alpha: Wu et al.'s penalty adds 5 to each length "
                             "(and divides by (5 + 1)^alpha).")
    if abs(got[0] - 1 / TIE) < 1e-3:
        raise AssertionError("You inverted one of the two ratios, of the penalties or of the log-probabilities: "
                             "write s(A) = s(B) again and solve it for alpha.")
    close(got[0], TIE, "tie_alpha", atol=1e-3,
          hint="They tie when s(A) = s(B): write both scores with the penalty and solve for alpha; give it to 3 "
               "decimals.")
