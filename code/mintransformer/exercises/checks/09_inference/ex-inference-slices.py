"""Exercise: slice the evaluation by format, day of the month and month."""

import datetime
import sys
import types

from otter.test_files import test_case

from mintransformer import data, recipes
from mintransformer.exercises.checking import answered, call

OK_FORMAT = False
name = "ex-inference-slices"
points = 2


def _store():
    """What this chapter's checks keep for the rest of the Python process (a check runs again)."""
    return sys.modules.setdefault("_mintransformer_checks_09_inference", types.ModuleType("store"))


def _date_model():
    """The shipped date model, loaded once per Python process: this chapter's checks share it."""
    store = _store()
    if not hasattr(store, "date_model"):
        store.date_model = recipes.load_pretrained_date_model()
    return store.date_model


def _known():
    _, (train_pairs, validation_pairs, test_pairs) = recipes.task_data("dates")
    return {s for s, _ in train_pairs + validation_pairs + test_pairs}


def _decoded(formats, days, years):
    """{(fmt, day): [(source, target, output), ...]} over the dates of those years in no split.

    Decoded once per process for each set of arguments: running the check again costs nothing.
    """
    decoded = _store().__dict__.setdefault("decoded_slices", {})
    key = (tuple(formats), tuple(days), tuple(years))
    if key not in decoded:
        decoded[key] = _decode_slices(formats, days, years)
    return decoded[key]


def _decode_slices(formats, days, years):
    model, tokenizer = _date_model()
    known = _known()
    pairs = {(fmt, day): [(data.DATE_FORMATS[fmt](d), d.isoformat())
                          for d in (datetime.date(y, m, day) for y in years for m in range(1, 13))]
             for fmt in formats for day in days}
    pairs = {key: [(s, t) for s, t in value if s not in known] for key, value in pairs.items()}
    flat = [s for value in pairs.values() for s, _ in value]
    outputs = iter(recipes.translate(model, tokenizer, flat, recipes.TASKS["dates"]["output_length"]))
    return {key: [(s, t, next(outputs)) for s, t in value] for key, value in pairs.items()}


@test_case(points=1)
def the_error_table(error_table):
    _table(error_table, [2, 6, 7], [2, 11], range(1950, 2050, 9))


def _table(error_table, formats, days, years):
    got = call(error_table, "error_table", formats, days, years)
    if not isinstance(got, dict):
        raise AssertionError("`error_table` must return a dict {(fmt, day): (wrong, total)}.")
    expected = {key: (sum(o != t for _, t, o in value), len(value))
                for key, value in _decoded(formats, days, years).items()}
    if sorted(got) != sorted(expected):
        raise AssertionError(f"error_table({formats}, {days}, {years}) must have the keys {sorted(expected)}, "
                             f"one (fmt, day) pair per slice; yours has {sorted(got)}.")
    for key, (wrong, total) in expected.items():
        value = got[key]
        if isinstance(value, (str, bytes, dict)) or not (hasattr(value, "__len__") and len(value) == 2):
            raise AssertionError(f"error_table(...)[{key}] is {value!r}: it must be a pair (wrong, total).")
        try:
            g_wrong, g_total = (float(v) for v in value)
        except (TypeError, ValueError):
            raise AssertionError(f"error_table(...)[{key}] is {value!r}: it must be a pair of numbers "
                                 "(wrong, total).") from None
        if (g_wrong, g_total) == (total, wrong) and wrong != total:
            raise AssertionError(f"error_table(...)[{key}] is {value!r}: the pair is (wrong, total), in that "
                                 "order: the number of wrong outputs first, then the number of dates decoded.")
        if g_wrong != int(g_wrong):  # e.g. a rate, wrong / total
            raise AssertionError(f"error_table(...)[{key}] is {value!r}: wrong is a count, not a fraction: the "
                                 "number of outputs that differ from the ISO date.")
        if g_total == len(years) * 12 and g_total != total:
            raise AssertionError(
                f"For {key} you decoded all {g_total:.0f} dates; leave out those whose input string is in a split "
                "of the data set (`known`): the model was trained on some of them."
            )
        if g_total != total:
            raise AssertionError(f"For {key} you decoded {g_total:.0f} dates: that is too "
                                 f"{'many' if g_total > total else 'few'}. A slice has one date per year and "
                                 "month, the day fixed, leaving out the input strings in `known`.")
        if g_wrong != wrong:
            raise AssertionError(f"For {key} you count {g_wrong:.0f} wrong outputs: that is too "
                                 f"{'many' if g_wrong > wrong else 'few'}. An output is wrong when it differs "
                                 "from the ISO date (d.isoformat()) in any character; decode with "
                                 "recipes.translate, as the chapter does.")


@test_case(points=1)
def the_failing_months(failing_months):
    # Only the form here: the months are checked when your notebook is graded.
    answered(failing_months, "failing_months")
    if isinstance(failing_months, str):
        failing_months = [failing_months]
    try:
        got = {str(m).strip().capitalize() for m in failing_months}
    except TypeError:
        raise AssertionError("`failing_months` must be a set (or list) of month names.") from None
    if not got <= set(data.MONTHS):
        raise AssertionError(f"`failing_months` must hold full month names, as in data.MONTHS; got {sorted(got)}.")
