"""Hidden cases of ex-ablations-compare: another score than exact match (not a function of it), seeds
that are not 0 to 4, and other numbers of comparisons.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
"""

from otter.test_files import test_case


def _hidden_run(variant, seed, exact, bleu):
    return dict(name=variant, seed=seed, exact=exact, bleu=bleu)


# "ref" has seeds 3, 7, 11, 19, 42; "cand" lacks 11 and is listed out of order. Its exact match is a little
# higher on every seed, its BLEU lower by about 3.
HIDDEN_RUNS = [_hidden_run("ref", s, x, b) for s, x, b in
               [(3, 0.60, 20.1), (7, 0.70, 25.3), (11, 0.65, 22.0), (19, 0.80, 30.2), (42, 0.75, 28.4)]] + [
    _hidden_run("cand", 42, 0.762, 25.1), _hidden_run("cand", 3, 0.611, 17.6), _hidden_run("cand", 19, 0.809, 26.3),
    _hidden_run("cand", 7, 0.708, 22.9),
    _hidden_run("flat", 3, 0.58, 20.9), _hidden_run("flat", 7, 0.73, 24.1), _hidden_run("flat", 11, 0.62, 22.8),
    _hidden_run("flat", 19, 0.84, 29.0), _hidden_run("flat", 42, 0.71, 29.6),
]


@test_case(points=1, hidden=True)
def hidden_another_score_and_other_seeds(compare):
    for a, b, key, comparisons in [("cand", "ref", "bleu", 3), ("cand", "ref", "exact", 7), ("ref", "cand", "bleu", 7),
                                   ("flat", "ref", "bleu", 1), ("flat", "ref", "exact", 2)]:
        _check(compare, HIDDEN_RUNS, a, b, key=key, comparisons=comparisons)  # noqa: F821 (the public check's)
