"""Translating a list of sentences, and scoring it with sacreBLEU as the paper's successors do."""

import numpy as np
import sacrebleu

from ..data import pad
from ..decoding import beam_search, greedy_decode


def translate(model, tokenizer, texts, max_output_length, beam_size=1, alpha=0.6, max_tokens=4000):
    """Translate ``texts`` (a list of strings) with greedy decoding (``beam_size=1``) or beam search.

    The texts are encoded, sorted by length and decoded in batches of about ``max_tokens`` source
    tokens (less padding, and the compiled loop sees few source lengths), and the outputs are
    returned in the order of ``texts``. Raises ValueError for a text longer than the model's
    ``max_length`` in tokens.
    """
    encoded = [tokenizer.encode(t) for t in texts]
    too_long = [i for i, ids in enumerate(encoded) if len(ids) > model.max_length]
    if too_long:  # here, before any decoding: the compiled loop could not say which text
        raise ValueError(f"{len(too_long)} text(s) longer than the model's max_length={model.max_length} tokens, "
                         f"e.g. {texts[too_long[0]]!r} ({len(encoded[too_long[0]])} tokens).")
    order = np.argsort([len(ids) for ids in encoded], kind="stable")
    outputs = [None] * len(texts)
    start = 0
    while start < len(order):  # sorted by length: each added text is the batch's longest
        end = start + 1
        while end < len(order) and (end + 1 - start) * max(len(encoded[order[end]]), 1) * beam_size <= max_tokens:
            end += 1
        batch = order[start:end]
        longest = max(len(encoded[i]) for i in batch)
        source = pad([encoded[i] for i in batch], length=_bucket(max(longest, 1), model.max_length))
        if beam_size == 1:
            tokens = greedy_decode(model, source, tokenizer.start_id, tokenizer.end_id, max_output_length)
        else:
            tokens = beam_search(model, source, tokenizer.start_id, tokenizer.end_id, max_output_length,
                                 beam_size=beam_size, alpha=alpha)
        for i, row in zip(batch, tokens):
            outputs[i] = tokenizer.decode(row)
        start += len(batch)
    return outputs


def _bucket(length, limit):
    """``length`` rounded up to a multiple of 8 (at most ``limit``): fewer shapes to compile."""
    return min(-(-length // 8) * 8, limit)


def bleu(hypotheses, references):
    """sacreBLEU's corpus BLEU of detokenized ``hypotheses`` against one reference each.

    sacreBLEU tokenizes both sides itself (its ``13a`` tokenizer, as WMT's ``mteval-v13a.pl``), so
    that scores of different systems are comparable; its ``.format(signature=...)`` says how.
    """
    return sacrebleu.metrics.BLEU().corpus_score(list(hypotheses), [list(references)])


def chrf(hypotheses, references):
    """sacreBLEU's chrF (character n-gram F-score, Popovic, 2015), one reference each."""
    return sacrebleu.metrics.CHRF().corpus_score(list(hypotheses), [list(references)])
