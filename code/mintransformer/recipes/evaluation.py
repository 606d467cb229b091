"""Decoding a list of strings, and the exact-match score of a task's pairs."""

import numpy as np

from .. import data
from ..decoding import greedy_decode


def translate(model, tokenizer, texts, output_length, batch_size=500, **decode_options):
    """Decode a list of source strings (greedy unless ``decoder=beam_search`` is passed).

    Raises ValueError for a text longer than the model's ``max_length`` (in tokens).
    """
    decoder = decode_options.pop("decoder", greedy_decode)
    too_long = [t for t in texts if len(tokenizer.encode(t)) > model.max_length]
    if too_long:  # here, before any decoding: the compiled loop could not say which text
        raise ValueError(f"{len(too_long)} text(s) longer than the model's max_length={model.max_length} tokens, "
                         f"e.g. {too_long[0]!r} ({len(tokenizer.encode(too_long[0]))} tokens).")
    results = []
    for start in range(0, len(texts), batch_size):
        source = data.pad([tokenizer.encode(t) for t in texts[start:start + batch_size]])
        tokens = decoder(model, source, tokenizer.start_id, tokenizer.end_id, output_length, **decode_options)
        results += [tokenizer.decode(row) for row in tokens]
    return results


def exact_match(model, tokenizer, pairs, output_length, **decode_options):
    """Fraction of pairs whose decoded output equals the target string exactly."""
    if not len(pairs):
        raise ValueError("no pairs to score: the exact match of an empty set is undefined.")
    predictions = translate(model, tokenizer, [s for s, _ in pairs], output_length, **decode_options)
    return float(np.mean([p == t for p, (_, t) in zip(predictions, pairs)]))
