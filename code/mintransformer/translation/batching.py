"""Batches of about the same number of tokens, grouped by length (paper, section 5.1)."""

import itertools

import numpy as np
import tensorflow as tf

from ..data import PAD, pad


def length_batches(source_lengths, target_lengths, max_tokens, seed=0):
    """Index arrays, one per batch, of examples of about the same length.

    The examples are sorted by their longer side (ties broken at random with ``seed``) and cut in
    order into batches as large as ``max_tokens`` allows: a batch of n examples whose longest
    source has S tokens and longest target T tokens holds ``n * max(S, T) <= max_tokens``, so
    that neither padded side exceeds ``max_tokens`` tokens (the paper: "approximately 25000
    source tokens and 25000 target tokens"). The batches are returned in a random order.
    """
    source_lengths, target_lengths = np.asarray(source_lengths), np.asarray(target_lengths)
    if source_lengths.shape != target_lengths.shape or source_lengths.ndim != 1:
        raise ValueError(f"source_lengths and target_lengths must be two lists of one length each, "
                         f"got shapes {source_lengths.shape} and {target_lengths.shape}.")
    for lengths in (source_lengths, target_lengths):
        if lengths.size and (not np.issubdtype(lengths.dtype, np.integer) or lengths.min() < 0):
            raise ValueError(f"lengths must be counts of tokens (integers >= 0), got {lengths.dtype} from {lengths.min()}")
    longer = np.maximum(source_lengths, target_lengths)
    if longer.size and longer.max() > max_tokens:
        raise ValueError(f"an example of {longer.max()} tokens does not fit in a batch of max_tokens={max_tokens}.")
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(longer.size), longer))  # by length, ties at random
    batches, start = [], 0
    while start < order.size:
        end = start + 1
        # Sorted by length, so the example at ``end`` is the longest of the batch if it joins.
        while end < order.size and (end + 1 - start) * longer[order[end]] <= max_tokens:
            end += 1
        batches.append(order[start:end])
        start = end
    return [batches[i] for i in rng.permutation(len(batches))]


def random_batches(count, batch_size, seed=0):
    """Index arrays of ``batch_size`` examples drawn in a random order: the baseline that
    ``length_batches`` is compared with."""
    order = np.random.default_rng(seed).permutation(count)
    return [order[i:i + batch_size] for i in range(0, count, batch_size)]


def padding_fraction(batches, source_lengths, target_lengths):
    """The fraction of the padded (batch, length) arrays of both sides that is padding."""
    if not len(batches):
        raise ValueError("no batches")
    source_lengths, target_lengths = np.asarray(source_lengths), np.asarray(target_lengths)
    real = padded = 0
    for lengths in (source_lengths, target_lengths):
        for batch in batches:
            real += lengths[batch].sum()
            padded += len(batch) * lengths[batch].max()
    return 1.0 - real / padded


def token_dataset(sources, targets_in, targets_out, max_tokens, seed=0):
    """A ``tf.data`` pipeline of ``((source, target_in), target_out)`` batches made by
    ``length_batches``, with new batches every pass (a new random order of ties and of batches:
    pass ``e`` uses ``seed + e``), so that ``model.fit(..., epochs=n)`` sees n different orders.

    ``sources``, ``targets_in`` and ``targets_out`` are lists of id lists (``encode_pairs``);
    ``targets_in`` and ``targets_out`` have the same lengths. Each batch is padded with ``PAD`` to
    its own longest sequence.
    """
    source_lengths = [len(s) for s in sources]
    target_lengths = [len(t) for t in targets_in]
    passes = itertools.count()

    def generate():
        for batch in length_batches(source_lengths, target_lengths, max_tokens, seed=seed + next(passes)):
            yield ((pad([sources[i] for i in batch], pad_id=PAD), pad([targets_in[i] for i in batch], pad_id=PAD)),
                   pad([targets_out[i] for i in batch], pad_id=PAD))

    # The cuts depend on the sorted lengths only, not on the order of ties: every pass has as many
    # batches, which the dataset states so that Keras knows the length of an epoch.
    count = len(length_batches(source_lengths, target_lengths, max_tokens, seed=seed))
    ids = tf.TensorSpec((None, None), tf.int32)
    dataset = tf.data.Dataset.from_generator(generate, output_signature=((ids, ids), ids))
    return dataset.apply(tf.data.experimental.assert_cardinality(count)).prefetch(2)
