"""Hidden cases of ex-training-exact-vs-token: the two numbers, and the functions on other strings and
on the shipped model's outputs.

Merged after the public check (mt.exercises.merged_source), so its helpers (_estimate, _measure,
_accuracy_on, _fields, _number) are in scope.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import answered, call, close

END = "<end>"
FIELDS = ["year"] * 4 + ["separator"] + ["month"] * 2 + ["separator"] + ["day"] * 2 + ["end"]


def _token_accuracy(outputs, targets):
    """Right tokens / target tokens, each target read as its characters and <end>."""
    right = total = 0
    for output, target in zip(outputs, targets):
        said, wanted = list(output) + [END], list(target) + [END]
        right += sum(i < len(said) and said[i] == wanted[i] for i in range(len(wanted)))
        total += len(wanted)
    return right / total


def _first_wrong_field(output, target):
    if output == target:
        return None
    i = next(i for i in range(len(target) + 1) if output[i:i + 1] != target[i:i + 1])
    return FIELDS[i]


@test_case(points=1, hidden=True)
def hidden_the_estimate_and_the_measure(predicted_exact_match, measured_exact_match, date_forced_accuracy,
                                        date_outputs, date_test):
    predicted, a = _estimate(predicted_exact_match, date_forced_accuracy)  # noqa: F821 (the public check's)
    expected = a**11
    if not np.isclose(predicted, expected, rtol=0, atol=1e-6):
        close(predicted, expected, "`predicted_exact_match`", atol=0, rtol=0,
              hint="The estimate is a^11, with a = date_forced_accuracy: 11 tokens, each right with probability a.")
    answered(date_outputs, "date_outputs (made by the set-up cell: run it)")
    targets = [t for _, t in date_test]
    measured = _measure(measured_exact_match)  # noqa: F821
    expected = float(np.mean([p == t for p, t in zip(date_outputs, targets)]))
    if np.isclose(measured, 1 - expected, atol=1e-9) and not np.isclose(expected, 0.5):
        raise AssertionError("`measured_exact_match` is the fraction of WRONG outputs: take the right ones.")
    if not np.isclose(measured, expected, atol=1e-9):
        close(measured, expected, "`measured_exact_match`", atol=0, rtol=0,
              hint="It is the fraction of date_outputs equal to their target string, compared whole.")


@test_case(points=1, hidden=True)
def hidden_token_accuracy_on_other_strings(greedy_token_accuracy, date_outputs, date_test):
    outputs = ["2031-12-31", "2031-12-3", "1900-01-01<", "1900", "1999-99-99", "0000-00-00", "2000-02-29"]
    targets = ["2031-12-31", "2031-12-31", "1900-01-01", "1900-01-01", "1999-09-09", "2000-02-20", "2000-02-29"]
    expected = _token_accuracy(outputs, targets)
    _accuracy_on(greedy_token_accuracy, outputs, targets, expected)  # noqa: F821
    answered(date_outputs, "date_outputs (made by the set-up cell: run it)")
    targets = [t for _, t in date_test]
    got = _number(call(greedy_token_accuracy, "greedy_token_accuracy", date_outputs, targets),  # noqa: F821
                  "greedy_token_accuracy(date_outputs, targets)")
    expected = _token_accuracy(date_outputs, targets)
    if not np.isclose(got, expected, atol=1e-9):
        side = "too large" if got > expected else "too small"
        raise AssertionError(f"On the shipped model's outputs your token accuracy is {got:.6f}: that is {side}, "
                             "though it passed the small cases. Do you count every test date, 11 positions each?")


@test_case(points=1, hidden=True)
def hidden_fields_of_other_strings(first_wrong_field):
    pairs = [("2019-12-3x", "2019-12-31"), ("20", "2019-12-31"), ("2019-12-31 ", "2019-12-31"),
             ("2019_12-31", "2019-12-31"), ("2019-02-31", "2019-12-31"), ("1019-12-31", "2019-12-31"),
             ("2019-12+31", "2019-12-31"), ("2019-12-31", "2019-12-31"), ("2019-1", "2019-12-31")]
    _fields(first_wrong_field, [(o, t, _first_wrong_field(o, t)) for o, t in pairs])  # noqa: F821
