"""The analyses of chapter 9b: three ways to cut text into units, BLEU by length, where two systems differ.

- ``segment``: a text as characters, words or subwords, and ``segmentation_table``, which compares
  the three on a training and a test set (vocabulary, units per text, units never seen in training);
- ``bleu_by_length``: corpus BLEU of the sentences in each length bucket;
- ``sentence_bleus`` and ``largest_gains``: sentence by sentence, where one system beats another;
- ``rare_words``: the words of a text that the training texts hold at most a few times.
"""

import collections

import numpy as np
import regex

from .bpe import BYTE_TOKENS
from ..data import SPECIALS

# A word is a run of letters, marks and digits; every other character that is not a space is a
# unit of its own (punctuation). Case is kept: "Señor" and "señor" are two types, as for subwords.
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}]")
_BYTE_IDS = range(len(SPECIALS), len(SPECIALS) + len(BYTE_TOKENS))  # ids 3-258: <0x00> ... <0xFF>
UNITS = ("characters", "words", "subwords")


def words(text):
    """The words and punctuation marks of ``text``, case kept (spaces dropped).

    >>> words("Y dijo Dios: Sea la luz.")
    ['Y', 'dijo', 'Dios', ':', 'Sea', 'la', 'luz', '.']
    """
    return _WORD.findall(text)


def segment(text, unit, tokenizer=None):
    """``text`` cut into ``unit``: "characters" (spaces included), "words" or "subwords" (``tokenizer``'s).

    Characters and subwords join back into the text; words drop the spaces.
    """
    if unit == "characters":
        return list(text)
    if unit == "words":
        return words(text)
    if unit == "subwords":
        if tokenizer is None:
            raise ValueError("subwords need a tokenizer: segment(text, 'subwords', tokenizer)")
        return tokenizer.tokens(text)
    raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")


def segmentation_table(tokenizer, train_texts, test_texts):
    """Characters, words and subwords compared: one dict per unit.

    - ``vocabulary``: the distinct units of the training texts (for subwords: every id of the
      tokenizer, its 256 byte tokens and 3 specials included, since the model needs one row each);
    - ``per_text``: mean units per test text;
    - ``unseen``: the fraction of the test texts' units whose type never occurs in the training
      texts: out-of-vocabulary words, new characters, and for subwords the byte tokens, which
      only a character never seen in training becomes (byte fallback);
    - ``unseen_types``: the same over distinct types instead of occurrences.
    """
    if isinstance(train_texts, str) or isinstance(test_texts, str):
        raise TypeError("train_texts and test_texts are lists of strings, not strings")
    rows = []
    for unit in UNITS:
        if unit == "subwords":
            test_units = [tokenizer.encode(t) for t in test_texts]
            vocabulary = tokenizer.vocab_size
            known = set(range(tokenizer.vocab_size)) - set(_BYTE_IDS)
        else:
            known = {u for t in train_texts for u in segment(t, unit)}
            vocabulary = len(known)
            test_units = [segment(t, unit) for t in test_texts]
        counts = collections.Counter(u for units in test_units for u in units)
        total = sum(counts.values())
        unseen = sum(n for u, n in counts.items() if u not in known)
        rows.append(dict(unit=unit, vocabulary=vocabulary, per_text=total / max(len(test_texts), 1),
                         unseen=unseen / max(total, 1),
                         unseen_types=sum(u not in known for u in counts) / max(len(counts), 1)))
    return rows


def bleu_by_length(hypotheses, references, lengths, edges):
    """Corpus BLEU (sacreBLEU's defaults) of the sentences in each length bucket.

    Args:
        hypotheses, references: lists of strings, one reference per hypothesis.
        lengths: a length per sentence (for instance the source's subword count).
        edges: increasing bucket edges; bucket i holds ``edges[i] <= length < edges[i + 1]``.

    Returns:
        a list of dicts, one per bucket that holds a sentence: ``low``, ``high``, ``count``, ``bleu``
        (sacreBLEU's ``BLEUScore``).
    """
    from .evaluation import bleu

    hypotheses, references, lengths = list(hypotheses), list(references), np.asarray(lengths)
    if not len(hypotheses) == len(references) == len(lengths):
        raise ValueError(f"{len(hypotheses)} hypotheses, {len(references)} references and {len(lengths)} lengths: "
                         f"one of each per sentence")
    edges = list(edges)
    if any(b <= a for a, b in zip(edges, edges[1:])):
        raise ValueError(f"edges must increase, got {edges}")
    rows = []
    for low, high in zip(edges, edges[1:]):
        chosen = np.flatnonzero((lengths >= low) & (lengths < high))
        if chosen.size:
            rows.append(dict(low=low, high=high, count=int(chosen.size),
                             bleu=bleu([hypotheses[i] for i in chosen], [references[i] for i in chosen])))
    return rows


def sentence_bleus(hypotheses, references):
    """sacreBLEU's sentence BLEU (its defaults: exponential smoothing) of each hypothesis, as an array."""
    import sacrebleu

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    metric = sacrebleu.metrics.BLEU(effective_order=True)
    return np.array([metric.sentence_score(h, [r]).score for h, r in zip(hypotheses, references)])


def largest_gains(first, second, references, count=5):
    """Indices of the sentences where ``second`` beats ``first`` by the most sentence BLEU, largest first.

    Only sentences where the two outputs differ and ``second`` scores higher are returned (ties
    broken by the lower index), so the list can be shorter than ``count``.
    """
    gains = sentence_bleus(second, references) - sentence_bleus(first, references)
    order = np.lexsort((np.arange(len(gains)), -gains))
    return [int(i) for i in order if gains[i] > 0 and first[i] != second[i]][:count]


def word_counts(texts):
    """How often each word (``words``) occurs in ``texts``: a ``collections.Counter``."""
    if isinstance(texts, str):
        raise TypeError("texts is a list of strings, not one string")
    return collections.Counter(w for t in texts for w in words(t))


def rare_words(train, text, max_count=0, capitalized=False):
    """The words of ``text`` that occur at most ``max_count`` times in training, in order, once each.

    ``train`` is the training texts (a list of strings) or their ``word_counts``. With
    ``capitalized=True``, only words that start with a capital letter (names, mostly).
    """
    counts = train if isinstance(train, collections.Counter) else word_counts(train)
    found = []
    for w in words(text):
        if counts[w] <= max_count and w not in found and w[0].isalpha() and (w[0].isupper() or not capitalized):
            found.append(w)
    return found
