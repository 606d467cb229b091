"""Beam search with a length penalty, in the graph: k alive hypotheses, k finished ones apart.

The search keeps two sets per sequence, as tensor2tensor's ``beam_search.py`` does: the ``k``
best hypotheses that have not written ``end_id`` (alive), and the ``k`` best that have
(finished). A finished hypothesis is never pushed out by an alive one, and it stops being
extended. The search stops at ``max_length``, or earlier once no alive hypothesis can still
score above the worst finished one.
"""

import tensorflow as tf

from .checks import check_lengths
from .steps import NEG_INF, log_probs, reorder, stepper, write_column


def length_penalty(length, alpha):
    """Wu et al. (2016), equation 14: lp(Y) = (5 + |Y|)^alpha / (5 + 1)^alpha."""
    return ((5.0 + length) / 6.0) ** alpha


def beam_tokens(model, source, start_id, end_id, max_length, beam_size=4, alpha=0.6, use_cache=True,
                encode_once=False):
    """Beam search in the graph: source (B, S) int32 -> tokens (B, max_length). See ``beam_search``.

    Call it inside a ``tf.function``; the arguments other than ``source`` are Python values.
    """
    source, max_length = check_lengths(model, source, max_length)
    batch, k = tf.shape(source)[0], beam_size
    state, step, start_tokens = stepper(model, tf.repeat(source, k, axis=0), start_id, max_length, use_cache,
                                        encode_once)  # the decoder's batch: k rows per sequence, one per alive
    banned = [i for i in (model.pad_id, start_id) if i is not None]
    first_row = tf.range(batch)[:, None] * k  # (B, 1): the row of each sequence's first alive hypothesis
    impossible = tf.constant(NEG_INF, tf.float64)

    def body(t, words, state, alive, alive_log_p, finished, finished_score):
        logits, state = step(state, words, t)  # (B k, V)
        log_p = alive_log_p[:, :, None] + tf.reshape(log_probs(logits, banned), (batch, k, -1))  # (B, k, V)
        vocab = tf.shape(log_p)[-1]
        ends = tf.equal(tf.range(vocab), end_id)  # (V,)
        # 1. Alive: the k most probable extensions that do not end. All have t + 1 tokens, so one lp
        # divides all their scores and log P alone orders them. top_k breaks ties to the lower index.
        alive_log_p, best = tf.math.top_k(tf.reshape(tf.where(ends, impossible, log_p), (batch, -1)), k)
        beam, word = best // vocab, best % vocab  # (B, k): which hypothesis each extends, with which token
        # 2. Finished: the k best of those kept and of the extensions that end now, by log P / lp.
        ended = tf.reduce_max(tf.where(ends, log_p, impossible), axis=-1)  # (B, k): log P of alive + end
        ended_score = ended / length_penalty(tf.cast(t + 1, tf.float64), alpha)
        ended_tokens = write_column(alive, t, tf.fill(tf.shape(ended), end_id))  # (B, k, L)
        finished_score, kept = tf.math.top_k(tf.concat([finished_score, ended_score], axis=1), k)
        finished = tf.gather(tf.concat([finished, ended_tokens], axis=1), kept, batch_dims=1)
        alive = write_column(tf.gather(alive, beam, batch_dims=1), t, word)  # (B, k, L): each one's history
        state = reorder(state, tf.reshape(first_row + beam, [-1]))  # the decoder's rows follow their hypotheses
        return t + 1, tf.reshape(word, (-1, 1)), state, alive, alive_log_p, finished, finished_score

    def running(t, words, state, alive, alive_log_p, finished, finished_score):
        # log P only falls as tokens are added, and lp is largest at max_length (alpha >= 0): the best
        # score any alive hypothesis can still reach is its log P / lp(max_length).
        reachable = alive_log_p[:, 0] / length_penalty(float(max_length), alpha)  # (B,)
        settled = finished_score[:, -1] > reachable  # the worst of the k finished already beats it
        return tf.logical_and(t < max_length, tf.logical_not(tf.reduce_all(settled)))

    def fixed_shapes(body):  # gathers lose the static batch size; the loop needs every shape unchanged
        def same_shapes(*old):
            return tf.nest.map_structure(lambda n, o: tf.ensure_shape(n, o.shape), body(*old), old)
        return same_shapes

    # All k start from <start>: keep one alive, or the first top-k would repeat it k times.
    alive_log_p = tf.tile(tf.where(tf.range(k) == 0, tf.constant(0.0, tf.float64), impossible)[None], [batch, 1])
    empty = tf.fill([batch, k, max_length], model.pad_id)
    start = (tf.constant(0), start_tokens, state, empty, alive_log_p, empty, tf.fill([batch, k], impossible))
    _, _, _, alive, _, finished, finished_score = tf.while_loop(running, fixed_shapes(body), start)
    # The best finished hypothesis; a sequence in which none finished returns its best cut-off one.
    return tf.where((finished_score[:, 0] > NEG_INF)[:, None], finished[:, 0], alive[:, 0])
