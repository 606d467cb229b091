"""Exercise: one merge step of byte-pair encoding, with the pair counts brought up to date."""

import collections

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, refusing
from mintransformer.translation import bpe

OK_FORMAT = False
name = "ex-translation-merge"
points = 3

RULE = ("`merge_step` calls the package's byte-pair encoding (merge_pair, learn_bpe or a helper of "
        "mintransformer.translation.bpe): write the step yourself, with Python's lists, tuples and dicts.")
REFUSED = [bpe.merge_pair, bpe.learn_bpe, bpe._count_pairs, bpe._best_pair, bpe._apply_merge, bpe.count_pre_tokens]

# Sennrich et al.'s example (low, lower, newest, widest, 5, 2, 6, 3 times), with the end-of-word
# symbol left out: characters as ids l=10 o=11 w=12 e=13 r=14 n=15 s=16 t=17 i=18 d=19.
WORDS = [(10, 11, 12), (10, 11, 12, 13, 14), (15, 13, 12, 13, 16, 17), (12, 18, 19, 13, 16, 17)]
FREQS = [5, 2, 6, 3]


def _counts(words, freqs):
    counts = collections.Counter()
    for word, freq in zip(words, freqs):
        for pair in zip(word, word[1:]):
            counts[pair] += freq
    return counts


def _expected(words, freqs, new_id):
    """(pair, merged words, counts after the merge) computed with the package's own pieces."""
    counts = _counts(words, freqs)
    best = min(counts, key=lambda p: (-counts[p], p))
    merged = [bpe.merge_pair(w, best, new_id) for w in words]
    return best, merged, dict(_counts(merged, freqs))


def _overlapping(word, pair, new_id):
    """The known mistake: after a merge, the scan goes on at the right token (i + 1), not after it."""
    out = []
    for i, token in enumerate(word):
        out.append(new_id if i + 1 < len(word) and (token, word[i + 1]) == pair else token)
    return tuple(out)


def _random_case(seed, alphabets=(3, 7), first=3, lengths=(1, 8), counts=(4, 12), top=6, new_id=None):
    """Random words: ``counts`` words of ``lengths`` ids among ``alphabets`` ids from ``first``, freqs below ``top``."""
    rng = np.random.default_rng(seed)
    alphabet = int(rng.integers(*alphabets))
    words = [tuple(int(x) for x in rng.integers(first, first + alphabet, size=rng.integers(*lengths)))
             for _ in range(rng.integers(*counts))]
    freqs = [int(f) for f in rng.integers(1, top, size=len(words))]
    return words, freqs, 1000 + seed if new_id is None else int(rng.integers(*new_id))


def _as_words(value, what):
    try:
        return [tuple(int(x) for x in word) for word in value]
    except (TypeError, ValueError):
        raise AssertionError(f"{what} must be a list of words, each a tuple of ids.") from None


def _answer(merge_step, words, freqs, new_id):
    copies = [tuple(w) for w in words], list(freqs)
    with refusing(REFUSED, merge_step, RULE):
        result = call(merge_step, "merge_step", *copies, new_id)
    if not (isinstance(result, (tuple, list)) and len(result) == 3):
        raise AssertionError("`merge_step` must return three things: (pair, merged_words, pair_counts).")
    pair, merged, counts = result
    try:
        pair = tuple(int(x) for x in pair)
        assert len(pair) == 2
    except (TypeError, ValueError, AssertionError):
        raise AssertionError(f"the pair must be a tuple of two ids, not {pair!r}.") from None
    merged = _as_words(merged, "merged_words")
    if not isinstance(counts, dict):
        raise AssertionError(f"pair_counts must be a dict {{(left, right): count}}, not a {type(counts).__name__}.")
    try:
        counts = {tuple(int(x) for x in p): int(n) for p, n in counts.items()}
    except (TypeError, ValueError):
        raise AssertionError("pair_counts must map pairs (left, right) of ids to counts.") from None
    return pair, merged, counts


def _check(merge_step, words, freqs, new_id, case):
    best, merged, after = _expected(words, freqs, new_id)
    pair, got_words, got_counts = _answer(merge_step, words, freqs, new_id)
    before = _counts(words, freqs)
    if pair != best:
        unweighted = _counts(words, [1] * len(words))
        joined = _counts([tuple(x for w in words for x in w)], [1])
        if pair not in before and pair in joined:
            raise AssertionError(f"{case}: your pair spans two words: pairs never cross the edge of a word "
                                 f"(a pre-token).")
        if before[pair] < before[best]:
            if pair == min(unweighted, key=lambda p: (-unweighted[p], p)):
                raise AssertionError(f"{case}: you chose the pair that occurs in the most words: a word that "
                                     f"occurs freqs[i] times counts freqs[i] times.")
            raise AssertionError(f"{case}: the pair you chose is not the most frequent one.")
        if before[pair] == before[best]:
            raise AssertionError(f"{case}: several pairs share the highest count, and you took another one than "
                                 f"the rule says: the smallest (left, right), as learn_bpe does.")
        raise AssertionError(f"{case}: the pair you chose is not the most frequent one.")
    if len(got_words) != len(merged):
        raise AssertionError(f"{case}: merged_words must hold one word per word of `words`, in order.")
    for word, got, right in zip(words, got_words, merged):
        if got != right:
            if got == _overlapping(word, best, new_id):
                raise AssertionError(f"{case}: the word {word} becomes {got}: after a merge your scan goes on at "
                                     f"the pair's right token, so occurrences of the pair overlap and that token "
                                     f"is kept too. A token joins one pair only: go on after the right token.")
            raise AssertionError(f"{case}: the word {word} becomes {got}: replace each occurrence of the pair, "
                                 f"scanning left to right, by new_id, and keep every other id.")
    if got_counts == {p: n for p, n in before.items()}:
        raise AssertionError(f"{case}: pair_counts are the counts before the merge: bring them up to date.")
    zero = [p for p, n in got_counts.items() if n == 0]
    if zero:
        raise AssertionError(f"{case}: pair_counts still lists pairs that no longer occur (count 0), e.g. "
                             f"{zero[0]}: drop them.")
    if got_counts != after:
        wrong = sorted(set(got_counts) ^ set(after)) or sorted(p for p in after if got_counts[p] != after[p])
        raise AssertionError(f"{case}: pair_counts is wrong for {len(wrong)} pair(s), e.g. {wrong[0]}: after the "
                             f"merge, the pairs around each new token are new, the ones it replaced are gone, "
                             f"and each counts freqs[i] per occurrence in word i.")


@test_case(points=1)
def sennrich_example(merge_step):
    _check(merge_step, WORDS, FREQS, 20, "Sennrich et al.'s example")


@test_case(points=1)
def overlaps_and_ties(merge_step):
    # (5, 5, 5): the pair (5, 5) occurs once, not twice; (3, 4) and (4, 3) tie, (3, 4) is smaller.
    _check(merge_step, [(5, 5, 5), (5, 5, 5, 5), (3, 4), (4, 3)], [2, 1, 1, 1], 7,
           "Words (5, 5, 5), (5, 5, 5, 5), (3, 4), (4, 3) with freqs 2, 1, 1, 1")
    _check(merge_step, [(4, 3), (3, 4), (6, 7, 6, 7)], [2, 2, 1], 9,
           "Words (4, 3), (3, 4), (6, 7, 6, 7) with freqs 2, 2, 1")


@test_case(points=1)
def random_words(merge_step):
    for seed in range(30):
        words, freqs, new_id = _random_case(seed)
        if not _counts(words, freqs):
            continue
        _check(merge_step, words, freqs, new_id, f"Random words {words} with freqs {freqs}")
