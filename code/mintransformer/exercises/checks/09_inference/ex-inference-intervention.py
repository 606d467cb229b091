"""Exercise: change one field of the input and watch the output (an intervention)."""

import sys
import types

from otter.test_files import test_case

from mintransformer import data, recipes
from mintransformer.exercises.checking import answered

OK_FORMAT = False
name = "ex-inference-intervention"
points = 3


def _date_model():
    """The shipped date model, loaded once per Python process: this chapter's checks share it."""
    store = sys.modules.setdefault("_mintransformer_checks_09_inference", types.ModuleType("store"))
    if not hasattr(store, "date_model"):
        store.date_model = recipes.load_pretrained_date_model()
    return store.date_model


def _check(outputs, name, texts, what):
    answered(outputs, name)
    order = "data.DAYS" if what == "weekday" else "data.MONTHS"
    if isinstance(outputs, (dict, set, frozenset, str, bytes)) or not hasattr(outputs, "__len__"):
        raise AssertionError(f"`{name}` must be a list of {len(texts)} strings in the order of {order}, "
                             f"not a {type(outputs).__name__}.")
    outputs = [o.decode() if isinstance(o, bytes) else str(o) for o in outputs]
    if len(outputs) != len(texts):
        raise AssertionError(f"`{name}` has {len(outputs)} outputs; it needs {len(texts)}, one for each {what}.")
    model, tokenizer = _date_model()
    expected = recipes.translate(model, tokenizer, texts, recipes.TASKS["dates"]["output_length"])
    if outputs == expected:
        return
    if sorted(outputs) == sorted(expected):
        raise AssertionError(f"`{name}` holds the right outputs in the wrong order: follow the order of {what}s "
                             f"in {order}.")
    i = next(i for i, (o, e) in enumerate(zip(outputs, expected)) if o != e)
    raise AssertionError(
        f"`{name}`[{i}] is {outputs[i]!r}, but the model writes something else for {texts[i]!r}. Decode the "
        "inputs with recipes.translate; do not write the dates you expect: the point is what the model does."
    )


@test_case(points=1)
def the_weekdays(weekday_outputs):
    _check(weekday_outputs, "weekday_outputs", [f"{d}, 17 March 1998" for d in data.DAYS], "weekday")


@test_case(points=1)
def the_months(month_outputs):
    _check(month_outputs, "month_outputs", [f"Tuesday, 17 {m} 1998" for m in data.MONTHS], "month")


@test_case(points=1)
def the_weekdays_before_2_november_1994(november_outputs):
    _check(november_outputs, "november_outputs", [f"{d}, 2 November 1994" for d in data.DAYS], "weekday")
