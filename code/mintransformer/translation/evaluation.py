"""Translating a list of sentences, and scoring it with sacreBLEU as the paper's successors do."""

import numpy as np
import sacrebleu

from ..data import pad
from ..decoding import beam_search, greedy_decode


def translate(model, tokenizer, texts, max_output_length=None, beam_size=1, alpha=0.6, max_tokens=4000):
    """Translate ``texts`` (a list of strings) with greedy decoding (``beam_size=1``) or beam search.

    The texts are encoded, sorted by length and cut into groups whose sources pad to the same
    length, a multiple of 8; each group is decoded in batches of a fixed number of rows, about
    ``max_tokens / beam_size`` source tokens, the last batch filled up with empty rows. So the
    compiled decoding loop sees one shape per length, not one per batch. The outputs come back in
    the order of ``texts``. ``max_output_length=None`` is the paper's rule (section 6.1): the
    input length + 50 tokens, here the group's padded length + 50, at most the model's
    ``max_length``. Raises ValueError for a text longer than the model's ``max_length`` in tokens.
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not one string (it would be translated letter by letter)")
    texts = list(texts)
    encoded = [tokenizer.encode(t) for t in texts]
    too_long = [i for i, ids in enumerate(encoded) if len(ids) > model.max_length]
    if too_long:  # here, before any decoding: the compiled loop could not say which text
        raise ValueError(f"{len(too_long)} text(s) longer than the model's max_length={model.max_length} tokens, "
                         f"e.g. {texts[too_long[0]]!r} ({len(encoded[too_long[0]])} tokens).")
    groups = {}  # padded length -> indices of the texts, shortest first
    for i in np.argsort([len(ids) for ids in encoded], kind="stable"):
        groups.setdefault(_bucket(max(len(encoded[i]), 1), model.max_length), []).append(i)
    outputs = [None] * len(texts)
    for length, members in groups.items():
        rows = max(1, max_tokens // (length * beam_size))
        output_length = max_output_length or output_limit(length, model.max_length)
        for start in range(0, len(members), rows):
            batch = members[start:start + rows]
            source = pad([encoded[i] for i in batch] + [[]] * (rows - len(batch)), length=length)
            if beam_size == 1:
                tokens = greedy_decode(model, source, tokenizer.start_id, tokenizer.end_id, output_length)
            else:
                tokens = beam_search(model, source, tokenizer.start_id, tokenizer.end_id, output_length,
                                     beam_size=beam_size, alpha=alpha)
            for i, row in zip(batch, tokens):
                outputs[i] = tokenizer.decode(row)
    return outputs


def output_limit(source_length, max_length):
    """The most subwords ``translate`` writes by default for a source of ``source_length``: the
    paper's input length + 50 (section 6.1), the input padded as ``translate`` pads it, at most
    ``max_length``."""
    return min(_bucket(max(source_length, 1), max_length) + 50, max_length)


def _bucket(length, limit):
    """``length`` rounded up to a multiple of 8 (at most ``limit``)."""
    return min(-(-length // 8) * 8, limit)


def _check_pairs(hypotheses, references):
    """Both as lists of strings of one length: sacreBLEU itself would cut the longer one short."""
    for name, value in (("hypotheses", hypotheses), ("references", references)):
        if isinstance(value, str):
            raise TypeError(f"{name} must be a list of strings, not one string")
    hypotheses, references = list(hypotheses), list(references)
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references: one reference each")
    if not hypotheses:
        raise ValueError("no sentences to score")
    return hypotheses, references


def bleu(hypotheses, references):
    """sacreBLEU's corpus BLEU of detokenized ``hypotheses`` against one reference each.

    sacreBLEU tokenizes both sides itself (its ``13a`` tokenizer, as WMT's ``mteval-v13a.pl``), so
    that scores of different systems are comparable; ``BLEU().get_signature()`` says how.
    """
    hypotheses, references = _check_pairs(hypotheses, references)
    return sacrebleu.metrics.BLEU().corpus_score(hypotheses, [references])


def chrf(hypotheses, references):
    """sacreBLEU's chrF (character n-gram F-score, Popovic, 2015), one reference each."""
    hypotheses, references = _check_pairs(hypotheses, references)
    return sacrebleu.metrics.CHRF().corpus_score(hypotheses, [references])
