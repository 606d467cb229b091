"""Exercise: exact match against token accuracy, on the greedy outputs of the shipped date model.

The public cases check the form of the two numbers and name their known mistakes, and check the two
functions on small cases whose expected results are written here; the numbers themselves, and the
functions on other strings and on the model's outputs, are compared by hidden cases, when the notebook
is graded.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, call, to_numpy

OK_FORMAT = False
name = "ex-training-exact-vs-token"
points = 3

def _number(value, what):
    answered(value, what)
    try:
        return float(np.asarray(to_numpy(value, what)).reshape(()))
    except Exception:
        raise AssertionError(f"`{what}` must be one number, not {type(value).__name__}.") from None


def _estimate(predicted_exact_match, date_forced_accuracy):
    """(predicted, a), after the known mistakes of the estimate."""
    a = _number(date_forced_accuracy, "date_forced_accuracy (made by the set-up cell: run it)")
    predicted = _number(predicted_exact_match, "predicted_exact_match")
    if np.isclose(predicted, a**10, rtol=0, atol=1e-6) and not np.isclose(a**10, a**11, rtol=0, atol=1e-6):
        raise AssertionError(
            "`predicted_exact_match` is a^10: a date target has 11 tokens, its 10 characters and <end>, "
            "and the string is right only if all 11 are.")
    if np.isclose(predicted, a, rtol=0, atol=1e-6):
        raise AssertionError("`predicted_exact_match` is the token accuracy itself: raise it to the power 11.")
    for digits in (3, 4, 5):
        rounded = round(a, digits)
        if np.isclose(predicted, rounded**11, rtol=0, atol=1e-7) and not np.isclose(a**11, rounded**11, rtol=0,
                                                                                    atol=1e-6):
            raise AssertionError(
                f"`predicted_exact_match` comes from a rounded accuracy: you used {rounded:.{digits}f}"
                + (" (the printed value)" if digits == 5 else "") + f", date_forced_accuracy rounded to {digits} "
                "decimals. Raised to the 11th power, the rounding error grows about 11 times, more than the "
                "check's tolerance. Compute the power from the variable date_forced_accuracy itself.")
        if np.isclose(predicted, round(a**11, digits), rtol=0, atol=1e-9) and not np.isclose(
                a**11, round(a**11, digits), rtol=0, atol=1e-6):
            raise AssertionError(
                f"`predicted_exact_match` is a^11 rounded to {digits} decimals: keep the full value (the check "
                "compares to 1e-6: the estimate is to be set against a measured exact match that is a multiple "
                "of 1/1600).")
    return predicted, a


def _measure(measured_exact_match):
    measured = _number(measured_exact_match, "measured_exact_match")
    if measured > 1 and float(measured).is_integer():
        raise AssertionError("`measured_exact_match` is a count: divide it by the number of test dates.")
    if not 0 <= measured <= 1:
        raise AssertionError(f"`measured_exact_match` is {measured:g}: a fraction of the outputs lies between 0 "
                             "and 1.")
    return measured


@test_case(points=1)
def the_estimate_and_the_measure(predicted_exact_match, measured_exact_match, date_forced_accuracy):
    _estimate(predicted_exact_match, date_forced_accuracy)  # the values are for the hidden case
    _measure(measured_exact_match)


OUTPUTS = ["1998-03-03", "2042-09-25", "2003-10-0", "1987-06-111", ""]
TARGETS = ["1998-03-03", "2024-09-25", "2003-10-02", "1987-06-11", "1966-11-02"]


TOKEN_ACCURACY = 39 / 55  # of OUTPUTS against TARGETS: 5 dates, 11 positions each


def _accuracy_on(greedy_token_accuracy, outputs, targets, expected):
    got = _number(call(greedy_token_accuracy, "greedy_token_accuracy", outputs, targets),
                  "greedy_token_accuracy(outputs, targets)")
    case = f"greedy_token_accuracy({outputs}, {targets})"
    ten = sum(o[i:i + 1] == t[i] for o, t in zip(outputs, targets) for i in range(10)) / (10 * len(targets))
    zipped = (sum(a == b for o, t in zip(outputs, targets) for a, b in zip(o, t))
              / max(sum(min(len(o), len(t)) for o, t in zip(outputs, targets)), 1))
    exact = np.mean([o == t for o, t in zip(outputs, targets)])
    for value, message in [
        (ten, "you compare the 10 characters only. Count the <end> token too, 11 positions per date: an output "
              "that runs on has a character where <end> should be"),
        (zipped, "zip stops at the shorter string, so a missing character is not counted. Every target has 11 "
                 "positions; a position where the output has nothing is wrong"),
        (exact, "this is the exact match, not the token accuracy"),
    ]:
        if np.isclose(got, value) and not np.isclose(expected, value):
            raise AssertionError(f"{case} = {got:.4f}: {message}.")
    if not np.isclose(got, expected, atol=1e-9):
        side = "too large" if got > expected else "too small"
        raise AssertionError(
            f"{case} = {got:.4f}: that is {side}. Read each string as its characters then <end> and compare "
            f"position by position over the target's 11 ({11 * len(targets)} positions here); a position where "
            "the output has no token is wrong, and so is a character where the target has <end>.")


@test_case(points=1)
def token_accuracy_of_the_outputs(greedy_token_accuracy):
    _accuracy_on(greedy_token_accuracy, OUTPUTS, TARGETS, TOKEN_ACCURACY)


# (output, target, the field of the first wrong position)
FIELD_CASES = [("1998-03-03", "1998-03-03", None), ("2042-09-25", "2024-09-25", "year"),
               ("1994-11-22", "1994-11-02", "day"), ("1987-16-11", "1987-06-11", "month"),
               ("1987/06/11", "1987-06-11", "separator"), ("2001-01-3", "2001-01-31", "day"),
               ("1987-06-111", "1987-06-11", "end"), ("", "1966-11-02", "year"), ("1966-11-0", "1966-11-02", "day")]


def _fields(first_wrong_field, cases):
    for output, target, expected in cases:
        got = call(first_wrong_field, "first_wrong_field", output, target)
        if got == expected:
            continue
        if got is None and len(output) != len(target):
            raise AssertionError(
                f"first_wrong_field({output!r}, {target!r}) is None, but the output is "
                f"{'shorter' if len(output) < len(target) else 'longer'} than the target: zip stops at the "
                "shorter string. The first position where one has a character and the other has not (or has "
                "<end>) is wrong too.")
        raise AssertionError(
            f"first_wrong_field({output!r}, {target!r}) is {got!r}: that is not the field of the first position "
            "where the two differ. Positions 0-3 of "
            "YYYY-MM-DD are the year, 4 and 7 the separators, 5-6 the month, 8-9 the day, and position 10 the "
            "<end> token ('end'); None when the output is right.")


@test_case(points=1)
def the_field_of_the_first_wrong_character(first_wrong_field):
    _fields(first_wrong_field, FIELD_CASES)
