"""Exercise: the best exact match a model blind to character order can reach on the date task."""

import collections

from otter.test_files import test_case

from mintransformer.exercises.checking import call, close
from mintransformer.recipes import ablations

OK_FORMAT = False
name = "ex-ablations-bag-bound"
points = 2


def reference(pairs):
    groups = collections.defaultdict(collections.Counter)
    for source, target in pairs:
        groups["".join(sorted(source))][target] += 1
    return sum(max(c.values()) for c in groups.values()) / len(pairs)


SMALL = [("ab", "1"), ("ba", "2"), ("ab", "1"), ("cd", "3"), ("dc", "3"), ("ba", "2"), ("abc", "4")]


def _check(bag_bound, pairs, what):
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
    _check(bag_bound, SMALL, "a list of seven pairs")


@test_case(points=1)
def the_date_test_split(bag_bound):
    _, _, test, _ = ablations.task_splits("dates")
    _check(bag_bound, test, "the date test split")
