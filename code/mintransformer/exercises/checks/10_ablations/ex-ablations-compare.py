"""Exercise: compare two variants over their seeds, and call a difference only when the spread allows."""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close
from mintransformer.recipes import ablations

OK_FORMAT = False
name = "ex-ablations-compare"
points = 2


def reference(runs, a, b, key="exact"):
    values = {n: np.array([r[key] for r in runs if r["name"] == n]) for n in (a, b)}
    difference = values[a].mean() - values[b].mean()
    separated = values[a].min() > values[b].max() or values[b].min() > values[a].max()
    return float(difference), bool(separated)


def _run(name, exact, seed):
    return dict(name=name, seed=seed, exact=exact, perplexity=1.0 + exact)


SYNTHETIC = (
    [_run("a", x, s) for s, x in enumerate([0.50, 0.60, 0.70])]
    + [_run("b", x, s) for s, x in enumerate([0.70, 0.80, 0.90])]  # touches a's range at 0.70
    + [_run("c", x, s) for s, x in enumerate([0.71, 0.72, 0.73])]  # just above a's range
    + [_run("d", x, s) for s, x in enumerate([0.40, 0.65, 0.90, 0.41])]  # four seeds, around a's mean
)


def _answer(compare, runs, a, b, key):
    result = call(compare, "compare", runs, a, b, key)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise AssertionError(f"compare(runs, {a!r}, {b!r}, {key!r}) must return a pair (difference, separated); "
                             f"it returned {result!r}.")
    difference, separated = result
    if not isinstance(separated, (bool, np.bool_)):
        raise AssertionError(f"The second item of compare(...) must be True or False, not {separated!r}.")
    return difference, bool(separated)


def _check(compare, runs, a, b, key="exact"):
    difference, separated = _answer(compare, runs, a, b, key)
    right_difference, right_separated = reference(runs, a, b, key)
    if np.isclose(float(difference), -right_difference) and right_difference:
        raise AssertionError(f"compare(runs, {a!r}, {b!r}) has the sign of the difference reversed: give the "
                             f"mean of {a!r} minus the mean of {b!r}.")
    close(difference, right_difference, f"the difference of compare(runs, {a!r}, {b!r}, {key!r})", atol=1e-9,
          hint="Average each variant's runs over its seeds, then subtract.")
    if separated != right_separated:
        if right_separated:
            raise AssertionError(f"{a!r} and {b!r} are separated on {key!r}: the lowest seed of one is above the "
                                 "highest seed of the other.")
        raise AssertionError(f"{a!r} and {b!r} are not separated on {key!r}: their ranges (lowest to highest "
                             "seed) overlap or touch.")


@test_case(points=1)
def made_up_runs(compare):
    for a, b in [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("a", "d"), ("b", "c")]:
        _check(compare, SYNTHETIC, a, b)
    _check(compare, SYNTHETIC, "a", "c", key="perplexity")


@test_case(points=1)
def the_shipped_runs(compare):
    runs = ablations.load_results()["runs"]
    for a, b in [("heads_1", "base"), ("no_positions", "base"), ("cooldown", "base"), ("dropout_0", "base")]:
        _check(compare, runs, a, b)
    _check(compare, runs, "smoothing_0", "base", key="perplexity")
