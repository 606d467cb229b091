"""The decoding loop: one token per step, chosen greedily or drawn at random, in the graph."""

import tensorflow as tf

from .checks import check_lengths
from .sampling import sample
from .steps import log_probs, stepper, write_column


def decode_tokens(model, source, start_id, end_id, max_length, use_cache=True, encode_once=False,
                  temperature=0.0, top_k=None, top_p=1.0, seed=0):
    """One token per step, in the graph: source (B, S) int32 -> tokens (B, max_length).

    ``temperature=0`` picks the most probable id at every step (greedy decoding);
    ``temperature > 0`` draws it (see ``sample_decode``). Call it inside a ``tf.function``; the
    arguments other than ``source`` are Python values.
    """
    source, max_length = check_lengths(model, source, max_length)
    batch = tf.shape(source)[0]
    state, step, start_tokens = stepper(model, source, start_id, max_length, use_cache, encode_once)
    banned = [i for i in (model.pad_id, start_id) if i is not None]  # never generated

    def body(t, tokens, state, output, done):
        logits, state = step(state, tokens, t)  # (B, V)
        scores = log_probs(logits, banned)
        if temperature:
            next_ids = sample(scores, t, temperature, top_k, top_p, seed)
        else:
            next_ids = tf.argmax(scores, axis=-1, output_type=tf.int32)  # (B,)
        next_ids = tf.where(done, model.pad_id, next_ids)  # a finished sequence only pads
        output = write_column(output, t, next_ids)  # (B, max_length)
        return t + 1, next_ids[:, None], state, output, done | tf.equal(next_ids, end_id)

    def running(t, tokens, state, output, done):
        return tf.logical_and(t < max_length, tf.logical_not(tf.reduce_all(done)))

    start = (tf.constant(0), start_tokens, state, tf.fill([batch, max_length], model.pad_id),
             tf.zeros([batch], tf.bool))
    return tf.while_loop(running, body, start)[3]
