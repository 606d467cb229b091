"""Hidden cases of ex-translation-bleu-by-hand: other words, longer sentences, hypotheses much shorter or longer.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check) are in scope.
"""

import numpy as np
from otter.test_files import test_case

OTHER_WORDS = "in the beginning was the word and word was with god , all things were made by him .".split()


def _hidden_pair(seed):
    rng = np.random.default_rng(seed)
    reference = [str(w) for w in rng.choice(OTHER_WORDS, size=rng.integers(6, 31))]
    hypothesis = list(reference)
    for _ in range(rng.integers(0, 9)):  # substitute, delete or insert a word
        i = int(rng.integers(0, len(hypothesis)))
        kind = rng.integers(0, 3)
        if kind == 0:
            hypothesis[i] = str(rng.choice(OTHER_WORDS))
        elif kind == 1 and len(hypothesis) > 4:
            del hypothesis[i]
        else:
            hypothesis.insert(i, str(rng.choice(OTHER_WORDS)))
    return " ".join(hypothesis), " ".join(reference)


@test_case(points=1, hidden=True)
def hidden_other_sentences(bleu_by_hand):
    _check(bleu_by_hand, "the word was god", "in the beginning was the word , and the word was god")  # noqa: F821
    _check(bleu_by_hand, "all things were made by him , all things , all things were made",  # noqa: F821
           "all things were made by him")
    for seed in range(700, 730):
        _check(bleu_by_hand, *_hidden_pair(seed))  # noqa: F821
