"""Drawing the next token at random: temperature, top-k, top-p, and reproducible uniforms."""

import numpy as np
import tensorflow as tf

from .steps import NEG_INF


def sample(log_probs, t, temperature, top_k, top_p, seed):
    """One id per row (N,), drawn from the log-probabilities (N, V) after temperature, top-k, top-p.

    Reproducible: the random draw of step ``t`` depends only on ``(seed, t)``.
    """
    logits = log_probs / temperature
    impossible = tf.constant(NEG_INF, logits.dtype)
    if top_k:  # keep the k most probable ids
        kth = tf.math.top_k(logits, top_k).values[:, -1:]  # (N, 1)
        logits = tf.where(logits < kth, impossible, logits)
    if top_p < 1.0:  # keep the fewest most probable ids whose probabilities sum to >= top_p
        ordered = tf.sort(logits, axis=-1, direction="DESCENDING")  # (N, V)
        before = tf.cumsum(tf.nn.softmax(ordered), axis=-1, exclusive=True)  # mass above each id
        threshold = tf.reduce_min(tf.where(before < top_p, ordered, -impossible), axis=-1, keepdims=True)
        logits = tf.where(logits < threshold, impossible, logits)
    u = uniform(seed, t, tf.shape(logits)[0])  # (N,)
    cumulative = tf.cumsum(tf.nn.softmax(logits), axis=-1)  # (N, V)
    drawn = tf.reduce_sum(tf.cast(cumulative <= u[:, None], tf.int32), axis=-1)  # inverse CDF
    # Rounding can leave the total just below 1: never past the last id that has a probability.
    last = tf.shape(logits)[-1] - 1 - tf.argmax(tf.reverse(logits > NEG_INF, [-1]), axis=-1, output_type=tf.int32)
    return tf.minimum(drawn, last)


def uniform(seed, t, rows):
    """``rows`` numbers in [0, 1), one per row, from ``(seed, t, row)`` alone.

    An integer hash (Wellons's "lowbias32") rather than tf.random: the cached loop is compiled
    by XLA and the uncached baselines are not, and TensorFlow's stateless generators give other
    numbers under XLA inside a loop. Integer arithmetic gives the same bits everywhere.
    """
    def mix(x):
        x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 16)) * tf.constant(0x7FEB352D, tf.uint32)
        x = tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 15)) * tf.constant(0x846CA68B, tf.uint32)
        return tf.bitwise.bitwise_xor(x, tf.bitwise.right_shift(x, 16))

    golden = tf.constant(0x9E3779B9, tf.uint32)  # offsets, so that no input hashes from 0 to 0
    key = mix(mix(tf.constant(seed, tf.uint32) + golden) + tf.cast(t, tf.uint32) * golden)
    return tf.cast(mix(key + (tf.cast(tf.range(rows), tf.uint32) + 1) * golden), tf.float64) / 2.0**32


def check_sampling(temperature, top_k, top_p, vocab_size):
    """Clear errors for settings that would sample from nothing, or divide by zero; ``top_k`` as a
    Python int (or None), since it fixes a shape of the compiled loop."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0 to sample, got {temperature}; for the limit, temperature -> 0, "
                         "decode greedily (greedy_decode, greedy_generate).")
    if top_k is not None:
        if isinstance(top_k, np.ndarray) and top_k.ndim == 0:
            top_k = top_k[()]
        if (isinstance(top_k, (bool, np.bool_)) or not isinstance(top_k, (int, np.integer))
                or not 1 <= top_k <= vocab_size):
            raise ValueError(f"top_k must be an integer from 1 to the vocabulary's {vocab_size} (or None: no "
                             f"top-k), got {top_k!r}.")
        top_k = int(top_k)
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1] (1: no top-p), got {top_p}.")
    return top_k
