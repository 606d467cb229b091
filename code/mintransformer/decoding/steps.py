"""Where each decoding step's next-token logits come from, and the helpers every loop shares.

``stepper`` builds one of three step functions (with the key/value cache; the encoder output
computed once and the decoder re-run on the prefix; the whole model re-run on the prefix), all
with one signature, so that the loops in ``loop.py`` and ``beam.py`` do not care which.
"""

import tensorflow as tf
from keras import ops

from ..gpt import MinGPT

NEG_INF = float("-inf")


def log_probs(logits, banned_ids):
    """log_softmax over the vocabulary in float64, ``banned_ids`` made impossible: (N, V) -> (N, V)."""
    logits = tf.cast(logits, tf.float64)
    banned = tf.reduce_any(tf.equal(tf.range(tf.shape(logits)[-1])[:, None], banned_ids), axis=1)  # (V,)
    return tf.nn.log_softmax(tf.where(banned, tf.constant(NEG_INF, tf.float64), logits))


def write_column(buffer, t, column):
    """``buffer`` (..., L) with ``column`` (...) written at index ``t`` of its last axis.

    ``ops.slice_update``, as for the key/value cache: under XLA the buffer is updated in place.
    """
    return ops.slice_update(buffer, [0] * (len(buffer.shape) - 1) + [t], column[..., None])


def stepper(model, source, start_id, max_length, use_cache, encode_once):
    """``(state, step, start_tokens)``: ``step(state, tokens (N, 1), t)`` -> ``(logits (N, V), state)``.

    ``tokens`` stand at position ``t`` of the target; the logits are for position ``t + 1``.
    ``start_tokens`` (N, 1) are the tokens fed at ``t = 0``: ``start_id``. Every tensor in ``state``
    has the batch on its first axis, so beam search can reorder it. A ``MinGPT`` continues a
    prompt instead (``prompt_stepper``).
    """
    if isinstance(model, MinGPT):
        return prompt_stepper(model, source, max_length, use_cache)
    start_tokens = tf.fill([tf.shape(source)[0], 1], start_id)
    if use_cache:
        def cached(caches, tokens, t):
            return model.decode_step(tokens, t, caches, source)

        return model.start_cache(source, max_length), cached, start_tokens
    context = model.encode(source) if encode_once else None  # (N, S, D)

    def uncached(prefix, tokens, t):
        prefix = write_column(prefix, t, tokens[:, 0])  # (N, max_length): the tokens fed so far, then pad
        target = prefix[:, : t + 1]  # (N, t + 1): the whole prefix, every step
        if context is None:
            logits = model((source, target), training=False)
        else:
            logits = model.decode(target, context, source)
        return logits[:, t], prefix  # position t, not -1: XLA pads a prefix of changing length

    return tf.fill([tf.shape(source)[0], max_length], model.pad_id), uncached, start_tokens


def prompt_stepper(model, prompt, max_length, use_cache):
    """``stepper`` for a decoder-only model that continues ``prompt`` (N, P) by ``max_length`` tokens.

    Loop step ``t`` feeds the token at sequence position ``P - 1 + t``: ``start_tokens`` is the prompt's
    last token. With the cache, the ``P - 1`` tokens before it are written into it in one pass
    (the "prefill"), then one position per step; without it, the model re-reads the whole
    sequence so far at every step.
    """
    offset = prompt.shape[1] - 1  # P - 1, a Python int: every shape in the loop stays fixed
    start_tokens = prompt[:, offset:]  # (N, 1)
    if use_cache:
        caches = model.start_cache(tf.shape(prompt)[0], offset + max_length)
        if offset:
            _, caches = model.decode_step(prompt[:, :offset], 0, caches)  # prefill positions 0 .. P - 2

        def cached(caches, tokens, t):
            return model.decode_step(tokens, offset + t, caches)

        return caches, cached, start_tokens

    def uncached(sequence, tokens, t):
        sequence = write_column(sequence, offset + t, tokens[:, 0])  # (N, P - 1 + max_length)
        logits = model(sequence[:, : offset + t + 1], training=False)  # the whole sequence, every step
        return logits[:, offset + t], sequence

    sequence = tf.concat([prompt[:, :offset], tf.fill([tf.shape(prompt)[0], max_length], model.pad_id)], axis=1)
    return sequence, uncached, start_tokens


def reorder(state, order):
    """The per-hypothesis state in a new row order (beam search); what depends only on the
    source (cross-attention keys and values) is the same for every beam of a sequence."""
    if isinstance(state, list):  # the key/value caches
        return [dict(c, keys=tf.gather(c["keys"], order), values=tf.gather(c["values"], order),
                     is_token=tf.gather(c["is_token"], order)) for c in state]
    return tf.gather(state, order)  # the uncached prefix
