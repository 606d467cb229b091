"""Exercise: BLEU of one sentence by hand (clipped n-gram precisions, brevity penalty), as sacreBLEU computes it."""

import collections
import contextlib
import math

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, like

OK_FORMAT = False
name = "ex-translation-bleu-by-hand"
points = 3

RULE = ("`bleu_by_hand` calls sacreBLEU's BLEU (sentence_bleu, corpus_bleu, BLEU(), or the package's "
        "evaluation.bleu, which calls it): count the n-grams and compute the formulas yourself.")
WORDS = "the lord said to moses and aaron , speak unto children of israel".split()


class _Refused(Exception):
    pass


@contextlib.contextmanager
def _no_sacrebleu():
    """sacreBLEU's BLEU refused while the student's function runs (every way into it ends in these two)."""
    from sacrebleu.metrics.bleu import BLEU

    saved = {key: BLEU.__dict__[key] for key in ("compute_bleu", "_compute_segment_statistics")}
    used = []

    def refused(*args, **kwargs):
        used.append(True)
        raise _Refused("this exercise asks you not to call sacreBLEU's BLEU")

    BLEU.compute_bleu = staticmethod(refused)
    BLEU._compute_segment_statistics = refused
    try:
        yield used
    except Exception:
        if not used:
            raise
    finally:
        for key, value in saved.items():
            setattr(BLEU, key, value)
    if used:
        raise AssertionError(RULE)


def _sacrebleu(hypothesis, reference):
    from sacrebleu.metrics import BLEU

    return BLEU(tokenize="none", smooth_method="none", effective_order=True).sentence_score(hypothesis, [reference])


def _ngrams(tokens, n):
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _variants(hypothesis, reference):
    """Known wrong answers: {what: (precisions, bp, bleu)}."""
    h, r = hypothesis.split(), reference.split()
    c, rl = len(h), len(r)
    clipped = [sum((_ngrams(h, n) & _ngrams(r, n)).values()) / max(c - n + 1, 1) for n in range(1, 5)]
    unclipped = [sum(k for g, k in _ngrams(h, n).items() if g in _ngrams(r, n)) / max(c - n + 1, 1)
                 for n in range(1, 5)]
    recall = [sum((_ngrams(h, n) & _ngrams(r, n)).values()) / max(rl - n + 1, 1) for n in range(1, 5)]
    bp = 1.0 if c >= rl else math.exp(1 - rl / c)
    geometric = math.exp(sum(math.log(p) for p in clipped) / 4) if min(clipped) > 0 else 0.0
    return dict(
        unclipped=(unclipped, bp, None),
        recall=(recall, bp, None),
        inverted_bp=(clipped, math.exp(1 - c / rl) if c < rl else 1.0, None),
        always_bp=(clipped, math.exp(1 - rl / c), None),
        arithmetic=(clipped, bp, 100 * bp * float(np.mean(clipped))),
        no_bp=(clipped, bp, 100 * geometric),
        fraction=(clipped, bp, bp * geometric),
    )


MESSAGES = dict(
    unclipped="count each hypothesis n-gram at most as often as it occurs in the reference (clip the counts): "
              "\"the the the the\" must not score p1 = 1 against a reference with one \"the\".",
    recall="divide by the number of n-grams of the hypothesis, not of the reference: BLEU's p_n is a precision.",
    inverted_bp="the brevity penalty is exp(1 - r/c), with r the reference length and c the hypothesis length, "
                "when c < r.",
    always_bp="the brevity penalty is 1 when the hypothesis is at least as long as the reference: BLEU does not "
              "reward length.",
    arithmetic="combine the four precisions by their geometric mean, exp(sum of log p_n / 4), not their average.",
    no_bp="multiply the geometric mean of the precisions by the brevity penalty.",
    fraction="give BLEU on sacreBLEU's scale, 0 to 100 (100 times BP times the geometric mean).",
)


def _answer(bleu_by_hand, hypothesis, reference):
    with _no_sacrebleu():
        result = call(bleu_by_hand, "bleu_by_hand", hypothesis, reference)
    if not (isinstance(result, (tuple, list)) and len(result) == 3):
        raise AssertionError("`bleu_by_hand` must return three things: (precisions, brevity_penalty, bleu).")
    precisions, bp, bleu = result
    try:
        precisions = [float(p) for p in precisions]
        bp, bleu = float(bp), float(bleu)
    except (TypeError, ValueError):
        raise AssertionError("precisions must be 4 numbers, and brevity_penalty and bleu numbers.") from None
    if len(precisions) != 4:
        raise AssertionError(f"precisions must hold p1, p2, p3 and p4: 4 numbers, not {len(precisions)}.")
    return precisions, bp, bleu


def _check(bleu_by_hand, hypothesis, reference):
    case = f"hypothesis {hypothesis!r}, reference {reference!r}"
    expected = _sacrebleu(hypothesis, reference)
    precisions, bp, bleu = _answer(bleu_by_hand, hypothesis, reference)
    want = [p / 100 for p in expected.precisions]
    variants = _variants(hypothesis, reference)
    if not like(precisions, want, atol=1e-6):
        if like(precisions, expected.precisions, atol=1e-4):
            raise AssertionError(f"{case}: give the precisions as fractions between 0 and 1, not percentages.")
        for key in ("unclipped", "recall"):
            if like(precisions, variants[key][0], atol=1e-6):
                raise AssertionError(f"{case}: {MESSAGES[key]}")
        close(precisions, want, f"{case}: your precisions [p1, p2, p3, p4]", atol=1e-6,
              hint="p_n: the n-grams of the hypothesis found in the reference (each clipped to its count there), "
                   "divided by the number of n-grams of the hypothesis.")
    if not np.isclose(bp, expected.bp, atol=1e-6):
        for key in ("inverted_bp", "always_bp"):
            if np.isclose(bp, variants[key][1], atol=1e-6):
                raise AssertionError(f"{case}: {MESSAGES[key]}")
        close(bp, expected.bp, f"{case}: your brevity penalty", atol=1e-6,
              hint="BP = 1 if c >= r, else exp(1 - r/c) (c: hypothesis tokens, r: reference tokens).")
    if not np.isclose(bleu, expected.score, atol=1e-4):
        for key in ("arithmetic", "no_bp", "fraction"):
            if variants[key][2] is not None and np.isclose(bleu, variants[key][2], atol=1e-6):
                raise AssertionError(f"{case}: {MESSAGES[key]}")
        close(bleu, expected.score, f"{case}: your BLEU", atol=1e-4,
              hint="BLEU = 100 * BP * exp((log p1 + log p2 + log p3 + log p4) / 4), and 0 if a p_n is 0.")


def _random_pair(seed, words=None, lengths=(5, 14), edits=(0, 4)):
    """A random reference of ``lengths`` words and a hypothesis ``edits`` edits away (from ``words``; by
    default the reference's words are the first 9 of WORDS, the edits' any of WORDS)."""
    rng = np.random.default_rng(seed)
    reference = list(rng.choice(WORDS[:9] if words is None else words, size=rng.integers(*lengths)))
    words = WORDS if words is None else words
    hypothesis = list(reference)
    for _ in range(rng.integers(*edits)):  # substitute, delete or insert a word
        i = int(rng.integers(0, len(hypothesis)))
        kind = rng.integers(0, 3)
        if kind == 0:
            hypothesis[i] = str(rng.choice(words))
        elif kind == 1 and len(hypothesis) > 4:
            del hypothesis[i]
        else:
            hypothesis.insert(i, str(rng.choice(words)))
    return " ".join(hypothesis), " ".join(reference)


@test_case(points=1)
def one_verse(bleu_by_hand):
    # Shorter than the reference (brevity penalty), and every n-gram order matched.
    _check(bleu_by_hand, "and the lord said unto moses , speak to the children of israel",
           "the lord spoke to moses , saying , speak to the children of israel")
    # Longer, with a repeated word that the reference holds once.
    _check(bleu_by_hand, "the the lord said to moses and to aaron , speak", "the lord said to moses , speak")


@test_case(points=1)
def no_match_of_four_words(bleu_by_hand):
    _check(bleu_by_hand, "moses said to aaron and the lord", "the lord spoke to moses and aaron")


@test_case(points=1)
def random_sentences(bleu_by_hand):
    for seed in range(40):
        _check(bleu_by_hand, *_random_pair(seed))
