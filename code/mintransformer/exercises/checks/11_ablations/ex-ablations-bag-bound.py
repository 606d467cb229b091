"""Exercise: the best exact match a model blind to character order can reach on the date task.

The bound is over the task, every day of 1950-2049 in each of the 12 formats, each equally likely;
grouping a sample (the test split) by bag credits knowing which of a bag's dates the sample drew.
"""

import collections
import datetime
import functools

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


@functools.lru_cache(maxsize=None)
def _writings(day):
    """The 12 sources of one day, one per format."""
    return tuple(write(datetime.date.fromisoformat(day)) for write in data.DATE_FORMATS)


# Days that every list of the task's pairs holds in each format: the first, the last, a leap day, another.
PROBES = [data.FIRST_DAY, data.LAST_DAY, datetime.date(2000, 2, 29), datetime.date(1998, 3, 17)]
PART = ("the bound is over every pair, one per day and format. A sample seldom holds two dates of one bag, "
        "and grouped by bag it credits knowing which one it drew.")


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
    # Each pair is checked, and a few days in every format; whether every day is there, the graded check says.
    for source, target in pairs:
        try:
            day = datetime.date.fromisoformat(target)
        except ValueError:
            day = None
        if (day is None or target != day.isoformat() or not data.FIRST_DAY <= day <= data.LAST_DAY
                or source not in _writings(target)):
            raise AssertionError(f"every_date() holds the pair {(source, target)!r}, which the task does not draw: "
                                 "the source is a day from data.FIRST_DAY to data.LAST_DAY written with one of "
                                 "data.DATE_FORMATS, the target that day's day.isoformat().")
    present = set(pairs)
    for day in PROBES:
        for index, source in enumerate(_writings(day.isoformat())):
            if (source, day.isoformat()) not in present:
                raise AssertionError(f"every_date() leaves out {day.isoformat()} written in format {index}: it "
                                     f"holds only part of what the task can draw (a sample, some of the formats, "
                                     f"or not every day from data.FIRST_DAY to data.LAST_DAY, both included); {PART}")
    _check_bound(bag_bound, pairs, "every_date()")
