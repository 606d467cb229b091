"""Exercise: compare two variants seed by seed (paired t interval, Bonferroni over the comparisons)."""

import math

import numpy as np
from otter.test_files import test_case

from mintransformer import stats
from mintransformer.exercises.checking import call, close
from mintransformer.recipes import ablations

OK_FORMAT = False
name = "ex-ablations-compare"
points = 2


def _scores(runs, variant, key):
    return {r["seed"]: r[key] for r in runs if r["name"] == variant}


def _differences(runs, a, b, key):
    sa, sb = _scores(runs, a, key), _scores(runs, b, key)
    return np.array([sa[s] - sb[s] for s in sorted(set(sa) & set(sb))])


def _half_width(d, comparisons, quantile=None):
    quantile = quantile or stats.t_quantile(1 - 0.05 / comparisons / 2, d.size - 1)
    return quantile * d.std(ddof=1) / math.sqrt(d.size)


def reference(runs, a, b, key="exact", comparisons=1):
    d = _differences(runs, a, b, key)
    return float(d.mean()), bool(abs(d.mean()) > _half_width(d, comparisons))


# The wrong rules a student may write, each with what the check tells them. Each returns the
# verdict ``different`` that the rule gives.
def _ranges(runs, a, b, key, comparisons):
    va, vb = list(_scores(runs, a, key).values()), list(_scores(runs, b, key).values())
    return min(va) > max(vb) or min(vb) > max(va)


def _one_sd(runs, a, b, key, comparisons):
    va, vb = (np.array(list(_scores(runs, n, key).values())) for n in (a, b))
    return bool(va.mean() - va.std(ddof=1) > vb.mean() + vb.std(ddof=1)
                or vb.mean() - vb.std(ddof=1) > va.mean() + va.std(ddof=1))


def _unpaired(welch):
    """An unpaired t test of the two groups of runs: Welch's, or with the pooled variance."""
    def rule(runs, a, b, key, comparisons):
        va, vb = (np.array(list(_scores(runs, n, key).values())) for n in (a, b))
        qa, qb = va.var(ddof=1) / va.size, vb.var(ddof=1) / vb.size
        if welch:
            error, df = math.sqrt(qa + qb), (qa + qb) ** 2 / (qa ** 2 / (va.size - 1) + qb ** 2 / (vb.size - 1))
        else:
            df = va.size + vb.size - 2
            pooled = ((va.size - 1) * va.var(ddof=1) + (vb.size - 1) * vb.var(ddof=1)) / df
            error = math.sqrt(pooled * (1 / va.size + 1 / vb.size))
        df = max(1, int(df))
        return bool(abs(va.mean() - vb.mean()) > stats.t_quantile(1 - 0.05 / comparisons / 2, df) * error)
    return rule


def _one_comparison(runs, a, b, key, comparisons):
    return reference(runs, a, b, key, 1)[1]


def _normal_quantile(runs, a, b, key, comparisons):
    d = _differences(runs, a, b, key)
    z = {1: 1.959964, 2: 2.241403, 20: 3.023341}.get(comparisons, 3.0)
    return bool(abs(d.mean()) > _half_width(d, comparisons, quantile=z))


MISTAKES = [
    (_ranges, "compares the ranges of the seeds (lowest to highest): that rule is not a test of a difference; "
              "with more seeds the ranges widen and it finds less, not more. Test the per-seed differences."),
    (_one_sd, "compares mean +/- one standard deviation of each variant: that rule does not get surer with more "
              "seeds, and it ignores that the runs come in pairs. Test the per-seed differences."),
    ((_unpaired(True), _unpaired(False)),
     "compares the two groups of runs as if they were independent (an unpaired test): runs of one "
                "seed share their initial weights, data order and dropout masks; use the differences seed by "
                "seed."),
    (_one_comparison, "ignores `comparisons`: with m comparisons, each interval is at confidence 1 - 0.05/m "
                      "(Bonferroni), so that all m together miss with probability at most 5%."),
    (_normal_quantile, "uses the normal distribution's quantile: with n seeds the standard deviation is "
                       "estimated, and the interval takes Student's t quantile with n - 1 degrees of freedom."),
]


def _run(variant, seed, exact):
    return dict(name=variant, seed=seed, exact=exact, perplexity=1.0 + exact)


# Made-up runs on which each wrong rule gives a wrong verdict. "base" has seeds 0-4; the variants'
# runs are listed out of seed order, and some have fewer seeds, so that pairing by position or
# averaging over every seed gives a wrong difference.
_BASE = [0.50, 0.90, 0.60, 0.80, 0.70]
SYNTHETIC = [_run("base", s, x) for s, x in enumerate(_BASE)] + [
    # +0.02 on every seed, a little noise: the ranges and the +/- 1 SD bands overlap, the pairs don't.
    *[_run("small", s, _BASE[s] + 0.02 + e) for s, e in [(4, 0.001), (0, -0.002), (3, 0.0), (1, 0.002), (2, -0.001)]],
    # Ranges apart, but the paired differences are far from one another: not different.
    _run("apart", 0, 0.95), _run("apart", 1, 0.92), _run("apart", 2, 0.91),
    # Seeds 3, 1 and 2 only (listed in that order), a consistent -0.05.
    _run("short", 3, 0.75), _run("short", 1, 0.848), _run("short", 2, 0.551),
    # Different with 1 comparison, not with 20.
    *[_run("medium", s, _BASE[s] + 0.03 + e) for s, e in enumerate([0.02, -0.025, 0.012, -0.01, 0.003])],
    # A second, tight reference: ranges apart, the +/- 1 SD bands overlap, the pairs disagree.
    _run("tight", 0, 0.50), _run("tight", 1, 0.51), _run("tight", 2, 0.52),
    _run("wide", 0, 0.53), _run("wide", 1, 0.60), _run("wide", 2, 0.95),
    # An unpaired test finds a difference here; the pairs, which disagree, do not.
    *[_run("ref", s, x) for s, x in enumerate([0.40, 0.44, 0.42, 0.46, 0.48])],
    *[_run("shifted", s, x) for s, x in enumerate([0.51, 0.45, 0.49, 0.47, 0.53])],
    # Different with the normal quantile, not with Student's t (3 seeds).
    _run("t_not_z", 0, 0.60), _run("t_not_z", 1, 0.98), _run("t_not_z", 2, 0.64),
]
CASES = [("small", "base", 1), ("base", "small", 1), ("apart", "base", 1), ("short", "base", 1),
         ("medium", "base", 1), ("medium", "base", 20), ("t_not_z", "base", 1), ("small", "base", 20),
         ("wide", "tight", 1), ("shifted", "ref", 1)]


def _answer(compare, runs, a, b, key, comparisons):
    result = call(compare, "compare", runs, a, b, key, comparisons)
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise AssertionError(f"compare(runs, {a!r}, {b!r}, {key!r}, {comparisons}) must return a pair "
                             f"(difference, different); it returned a {type(result).__name__}.")
    difference, different = result
    if not isinstance(different, (bool, np.bool_)):
        raise AssertionError(f"The second item of compare(...) must be True or False, not a "
                             f"{type(different).__name__}.")
    return difference, bool(different)


def _check(compare, runs, a, b, key="exact", comparisons=1, cases=None):
    """One case; with ``cases`` (all the cases of one set of runs), a wrong verdict is named by the rule
    that gives the student's verdicts on every one of them."""
    difference, different = _answer(compare, runs, a, b, key, comparisons)
    right_difference, right_different = reference(runs, a, b, key, comparisons)
    call_text = f"compare(runs, {a!r}, {b!r}, {key!r}, comparisons={comparisons})"
    if right_difference and np.isclose(float(difference), -right_difference, atol=1e-9):
        raise AssertionError(f"{call_text} has the sign of the difference reversed: give {a!r} minus {b!r}.")
    sa, sb = _scores(runs, a, key), _scores(runs, b, key)
    unpaired = np.mean(list(sa.values())) - np.mean(list(sb.values()))
    by_position = np.mean([x - y for x, y in zip([r[key] for r in runs if r["name"] == a],
                                                 [r[key] for r in runs if r["name"] == b])])
    if not np.isclose(float(difference), right_difference, atol=1e-9):
        if np.isclose(float(difference), unpaired, atol=1e-9):
            raise AssertionError(f"The difference of {call_text} is the difference of the two means over all "
                                 "their seeds: average the per-seed differences over the seeds both variants "
                                 "were run from.")
        if np.isclose(float(difference), by_position, atol=1e-9):
            raise AssertionError(f"The difference of {call_text} pairs the runs by their place in the list: "
                                 "pair them by their seed.")
    close(difference, right_difference, f"the difference of {call_text}", atol=1e-9,
          hint="Average, over the seeds both variants share, the score of a minus the score of b.")
    if different != right_different:
        if cases:
            verdicts = [_answer(compare, runs, *case[:2], key, case[2])[1] for case in cases]
            for rules, message in MISTAKES:
                if any([rule(runs, *case[:2], key, case[2]) for case in cases] == verdicts
                       for rule in (rules if isinstance(rules, tuple) else (rules,))):
                    raise AssertionError(f"{call_text} is {different}: the function {message}")
        # True or False: saying which the interval gives would hand out the verdict, an answer of the exercise.
        raise AssertionError(f"{call_text} is {different}: that is not what the paired t interval at confidence "
                             f"1 - 0.05/{comparisons} says about 0. Check its half-width: Student's quantile at "
                             "1 - 0.05/(2 comparisons) with n - 1 degrees of freedom, times the standard error of "
                             "the mean per-seed difference.")


@test_case(points=1)
def made_up_runs(compare):
    for a, b, comparisons in CASES:
        _check(compare, SYNTHETIC, a, b, comparisons=comparisons, cases=CASES)
    _check(compare, SYNTHETIC, "small", "base", key="perplexity")


@test_case(points=1)
def the_shipped_runs(compare):
    runs = ablations.load_results()["runs"]
    m = len(ablations.COMPARISONS)
    for a, b in [("heads_1", "base"), ("no_positions", "base"), ("cooldown", "base"), ("learned_positions", "base"),
                 ("dropout_0", "base")]:
        _check(compare, runs, a, b, comparisons=m)
    _check(compare, runs, "cooldown", "base")
