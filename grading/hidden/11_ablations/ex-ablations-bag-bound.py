"""Hidden cases of ex-ablations-bag-bound: every pair of the task, which the public check no longer holds,
and another small list.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check_bound) are in scope.
"""

import collections
import datetime

from otter.test_files import test_case

from mintransformer import data
from mintransformer.exercises.checking import call


@test_case(points=1, hidden=True)
def hidden_every_pair_once(every_date):
    days = (data.LAST_DAY - data.FIRST_DAY).days + 1
    right = collections.Counter((write(day), day.isoformat()) for write in data.DATE_FORMATS
                                for day in (data.FIRST_DAY + datetime.timedelta(days=i) for i in range(days)))
    try:
        got = collections.Counter((str(s), str(t)) for s, t in call(every_date, "every_date"))
    except (TypeError, ValueError):
        raise AssertionError("every_date() must return a list of (source, target) pairs of strings.") from None
    if got != right:
        raise AssertionError("every_date() is not every pair the task can draw, each once: every day from "
                             "data.FIRST_DAY to data.LAST_DAY (both included) in each of data.DATE_FORMATS, with "
                             "day.isoformat() as the target.")


@test_case(points=1, hidden=True)
def hidden_another_small_list(bag_bound):
    # Bags of repeated characters; a bag whose two targets tie; a pair alone.
    pairs = [("aab", "x"), ("aba", "y"), ("baa", "x"), ("bab", "z"), ("abb", "z"), ("bba", "w"), ("q", "v"),
             ("ba", "t"), ("ab", "u")]
    _check_bound(bag_bound, pairs, "a list of nine pairs")  # noqa: F821 (the public check's)
