"""Hidden cases of ex-translation-merge: larger random vocabularies, long runs of one id, other new ids.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check, _counts) are in scope.
"""

from otter.test_files import test_case


def _hidden_case(seed):
    """More words, longer, over 2 to 12 ids from 40 up, with frequencies up to 50, and other new ids."""
    return _random_case(seed, alphabets=(2, 13), first=40, lengths=(1, 13), counts=(8, 30), top=51,  # noqa: F821
                        new_id=(100, 100_000))


@test_case(points=1, hidden=True)
def hidden_other_words(merge_step):
    # A run of seven 9s holds the pair (9, 9) three times; 8 and 9 follow each other in both orders.
    _check(merge_step, [(9,) * 7, (8, 9, 8, 9), (9, 8)], [1, 3, 2], 31,  # noqa: F821 (the public check's)
           "Words (9,) * 7, (8, 9, 8, 9), (9, 8) with freqs 1, 3, 2")
    for seed in range(500, 520):
        words, freqs, new_id = _hidden_case(seed)
        if _counts(words, freqs):  # noqa: F821
            _check(merge_step, words, freqs, new_id, f"Random words {words} with freqs {freqs}")  # noqa: F821
