"""Hidden cases of ex-translation-bleu-by-hand: other words, longer sentences, hypotheses much shorter or longer.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
"""

from otter.test_files import test_case

OTHER_WORDS = "in the beginning was the word and word was with god , all things were made by him .".split()


@test_case(points=1, hidden=True)
def hidden_other_sentences(bleu_by_hand):
    _check(bleu_by_hand, "the word was god", "in the beginning was the word , and the word was god")  # noqa: F821
    _check(bleu_by_hand, "all things were made by him , all things , all things were made",  # noqa: F821
           "all things were made by him")
    for seed in range(700, 730):
        _check(bleu_by_hand, *_random_pair(seed, OTHER_WORDS, lengths=(6, 31), edits=(0, 9)))  # noqa: F821
