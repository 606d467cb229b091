"""Exercise: the best exact match a model blind to character order can reach on the date task.

The bound is over the task, every day of 1950-2049 in each of the 12 formats, each equally likely;
grouping a sample (the test split) by bag credits knowing which of a bag's dates the sample drew.
"""

import collections
import datetime
import sys
import types

from otter.test_files import test_case

from mintransformer import data
from mintransformer.exercises.checking import call, close

OK_FORMAT = False
name = "ex-ablations-bag-bound"
points = 2


def reference(pairs):
    groups = collections.defaultdict(collections.Counter)
    for source, target in pairs:
        groups["".join(sorted(source))][target] += 1
    return sum(max(c.values()) for c in groups.values()) / len(pairs)


def every_pair():
    """Every (source, target) of the task, one per day and format; computed once per process."""
    store = sys.modules.setdefault("_mintransformer_checks_11_ablations", types.ModuleType("store"))
    if not hasattr(store, "every_date"):
        days = (data.LAST_DAY - data.FIRST_DAY).days + 1
        store.every_date = [(write(day), day.isoformat()) for write in data.DATE_FORMATS
                            for day in (data.FIRST_DAY + datetime.timedelta(days=i) for i in range(days))]
    return store.every_date


SMALL = [("ab", "1"), ("ba", "2"), ("ab", "1"), ("cd", "3"), ("dc", "3"), ("ba", "2"), ("abc", "4")]


def _check_bound(bag_bound, pairs, what):
    got = call(bag_bound, "bag_bound", pairs)
    right = reference(pairs)
    groups = collections.defaultdict(set)
    for source, target in pairs:
        groups["".join(sorted(source))].add(target)
    unique = sum(len(groups["".join(sorted(s))]) == 1 for s, _ in pairs) / len(pairs)
    if abs(float(got) - unique) < 1e-9 and unique != right:
        raise AssertionError(f"bag_bound({what}) counts only the sources whose bag has one target. Where a bag "
                             "has several, one output is still right for the most common of them: count those.")
    close(got, right, f"bag_bound({what})", atol=1e-9,
          hint="Group the pairs by the sorted characters of their source; a model blind to order gives every "
               "source of a group the same output, so at best the group's most common target.")


@test_case(points=1)
def a_small_list(bag_bound):
    _check_bound(bag_bound, SMALL, "a list of seven pairs")


@test_case(points=1)
def every_date_of_the_task(every_date, bag_bound):
    pairs = call(every_date, "every_date")
    try:
        pairs = [(str(s), str(t)) for s, t in pairs]
    except (TypeError, ValueError):
        raise AssertionError("every_date() must return a list of (source, target) pairs of strings.") from None
    right = every_pair()
    if len(pairs) != len(right):
        if set(pairs) <= set(right):
            raise AssertionError(f"every_date() returns {len(pairs):,} pairs, only part of what the task can draw "
                                 "(a sample, or some of the formats): the bound is over every pair, one per day "
                                 "and format. A sample seldom holds two dates of one bag, and grouped by bag it "
                                 "credits knowing which one it drew.")
        raise AssertionError(f"every_date() returns {len(pairs):,} pairs; the task writes every day from "
                             "data.FIRST_DAY to data.LAST_DAY (both included) in each of data.DATE_FORMATS.")
    if collections.Counter(pairs) != collections.Counter(right):
        raise AssertionError("every_date() has as many pairs as the task, but not the same ones: write each day "
                             "with each format of data.DATE_FORMATS as the source, and day.isoformat() as the "
                             "target.")
    _check_bound(bag_bound, pairs, "every_date()")
