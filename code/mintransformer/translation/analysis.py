"""The analyses of chapter 10: three ways to cut text into units, BLEU by length, where two systems differ.

- ``segment``: a text as characters, words or subwords, and ``segmentation_table``, which compares
  the three on a training and a test set (vocabulary, units per text, units never seen in training);
- ``bleu_by_length``: corpus BLEU of the sentences in each length bucket;
- ``sentence_bleus`` and ``largest_gains``: sentence by sentence, where one system beats another;
- ``paired_bootstrap``: how sure a difference of corpus BLEU between two systems is (Koehn, 2004);
- ``sequence_log_probs``: log P(output | source) under a model, to tell search errors from model errors;
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


def _bleu_statistics(hypotheses, references):
    """Per sentence: matched n-grams (4), n-grams (4), hypothesis length, reference length (N, 10)."""
    import sacrebleu

    metric = sacrebleu.metrics.BLEU(effective_order=True)  # (the statistics do not depend on it; no warning)
    rows = []
    for h, r in zip(hypotheses, references):
        score = metric.sentence_score(h, [r])
        rows.append(list(score.counts) + list(score.totals) + [score.sys_len, score.ref_len])
    return np.array(rows, dtype=np.int64)


def _corpus_bleu(statistics):
    """Corpus BLEU (sacreBLEU's defaults) from summed sentence statistics."""
    from sacrebleu.metrics import BLEU

    total = statistics.sum(axis=0)
    return BLEU.compute_bleu(total[:4].tolist(), total[4:8].tolist(), int(total[8]), int(total[9]),
                             smooth_method="exp").score


def paired_bootstrap(first, second, references, samples=1000, seed=0, confidence=0.95):
    """Paired bootstrap resampling of corpus BLEU (Koehn, 2004): is ``second`` better than ``first``?

    The test sentences are drawn with replacement ``samples`` times; each draw scores both systems
    on the same sentences (paired), so the spread of the difference reflects which sentences the
    test set happens to hold, not noise between the systems.

    Returns:
        a dict: ``difference`` (BLEU of ``second`` minus ``first`` on the whole set, as
        ``evaluation.bleu`` computes it), ``low`` and ``high`` (the ``confidence`` percentile
        interval of the difference over the draws), ``wins`` (the fraction of draws in which
        ``second`` scores higher).
    """
    if not len(first) == len(second) == len(references) or not len(references):
        raise ValueError(f"{len(first)} and {len(second)} outputs for {len(references)} references: "
                         f"one output of each system per reference, at least one")
    a, b = _bleu_statistics(first, references), _bleu_statistics(second, references)
    rng = np.random.default_rng(seed)
    differences = np.empty(samples)
    for k in range(samples):
        draw = rng.integers(0, len(references), size=len(references))
        differences[k] = _corpus_bleu(b[draw]) - _corpus_bleu(a[draw])
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(differences, [tail, 100 - tail])
    return dict(difference=_corpus_bleu(b) - _corpus_bleu(a), low=float(low), high=float(high),
                wins=float(np.mean(differences > 0)))


def sequence_log_probs(model, tokenizer, sources, outputs, batch_size=64):
    """log P(y | x) of each output under ``model``, and its length |y| in tokens, ``<end>`` included.

    ``sources`` and ``outputs`` are strings; each output is encoded, ended with ``<end>`` and scored
    by teacher forcing, in inference mode. Beam search ranks by log P / lp(|y|) with this |y|. An
    output of ``model.max_length`` tokens or more was cut off before its ``<end>``: its first
    ``model.max_length`` tokens are scored, without ``<end>``.

    Returns:
        two NumPy arrays (N,): the log-probabilities (float64) and the lengths (int).
    """
    from keras import ops

    from ..data import pad

    if len(sources) != len(outputs):
        raise ValueError(f"{len(sources)} sources for {len(outputs)} outputs")
    targets = [tokenizer.encode(o) + [tokenizer.end_id] for o in outputs]
    targets = [t if len(t) <= model.max_length else t[:model.max_length] for t in targets]
    log_probs = []
    for start in range(0, len(targets), batch_size):
        chunk = targets[start:start + batch_size]
        source = pad([tokenizer.encode(s) for s in sources[start:start + batch_size]], pad_id=tokenizer.pad_id)
        target_in = pad([[tokenizer.start_id] + t[:-1] for t in chunk], pad_id=tokenizer.pad_id)
        target_out = pad(chunk, pad_id=tokenizer.pad_id)
        logits = model((source, target_in), training=False)
        picked = ops.take_along_axis(ops.log_softmax(ops.cast(logits, "float32"), axis=-1),
                                     ops.expand_dims(target_out, -1), axis=-1)[..., 0]
        real = ops.cast(ops.not_equal(target_out, tokenizer.pad_id), "float32")
        log_probs.append(ops.convert_to_numpy(ops.sum(picked * real, axis=-1)).astype("float64"))
    return np.concatenate(log_probs), np.array([len(t) for t in targets])


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
