"""Decoding a trained model: greedy search and beam search, with or without a key/value cache."""

import weakref

import numpy as np
import tensorflow as tf
from keras import ops

# One pair of compiled functions per model, built on first use (tracing costs seconds). The
# functions reach the model through a weak reference only: a value that held the model strongly
# would keep its own key alive, and every model ever decoded would stay in memory.
_COMPILED = weakref.WeakKeyDictionary()


def _compiled(model):
    if model not in _COMPILED:
        ref = weakref.ref(model)
        _COMPILED[model] = {
            # Uncached: the whole model on the whole prefix; any prefix length, one trace.
            "full": tf.function(
                lambda source, target: ref()((source, target), training=False)[:, -1],
                reduce_retracing=True,
            ),
            # Encoder output reused, no key/value cache: the decoder on the whole prefix.
            "decoder": tf.function(
                lambda context, source, target: ref().decode(target, context, source)[:, -1],
                reduce_retracing=True,
            ),
            # Cached: one new position; fixed shapes, so one trace per batch size and length.
            "step": tf.function(lambda *args: ref().decode_step(*args), reduce_retracing=True),
        }
    return _COMPILED[model]


def _log_probs(logits, banned_ids):
    """log_softmax over the vocabulary, with ``banned_ids`` made impossible. (N, V) -> NumPy (N, V)."""
    logits = np.array(logits, dtype=np.float64)
    logits[:, banned_ids] = -np.inf
    logits -= logits.max(axis=-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))


class _Stepper:
    """Next-token logits for a batch of growing prefixes: with the key/value cache, with the
    encoder output computed once (``encode_once``), or re-running the whole model."""

    def __init__(self, model, source, start_id, max_length, use_cache, encode_once=False):
        self.model, self.source, self.use_cache = model, source, use_cache
        self.fns = _compiled(model)
        batch = source.shape[0]
        self.prefix = np.full((batch, 1), start_id, dtype=np.int32)  # (N, t + 1)
        self.context = model.encode(source) if encode_once and not use_cache else None  # (N, S, D)
        if use_cache:
            self.caches = model.start_cache(source, max_length)

    def logits(self):
        """Logits (N, V) for the position after the current prefix."""
        if self.context is not None:
            return self.fns["decoder"](self.context, self.source, tf.constant(self.prefix)).numpy()
        if not self.use_cache:
            return self.fns["full"](self.source, tf.constant(self.prefix)).numpy()
        position = self.prefix.shape[1] - 1
        logits, self.caches = self.fns["step"](
            tf.constant(self.prefix[:, -1:]), tf.constant(position), self.caches, self.source
        )
        return logits.numpy()

    def advance(self, tokens, order=None):
        """Append ``tokens`` (N,); ``order`` (N,) first reorders the rows (beam search)."""
        if order is not None:
            self.prefix = self.prefix[order]
            if self.context is not None:
                self.context = ops.take(self.context, order, axis=0)
            if self.use_cache:
                self.caches = [{k: ops.take(v, order, axis=0) for k, v in c.items()} for c in self.caches]
        self.prefix = np.concatenate([self.prefix, tokens[:, None].astype(np.int32)], axis=1)


def _check(model, source_tokens, max_length):
    source = np.asarray(source_tokens, dtype=np.int32)
    if source.ndim != 2:
        raise ValueError(f"source_tokens must have shape (B, S), got {source.shape}.")
    if max_length > model.max_length:
        raise ValueError(f"max_length={max_length} exceeds the model's max_length={model.max_length}.")
    return tf.constant(source)


def greedy_decode(model, source_tokens, start_id, end_id, max_length, use_cache=True, encode_once=False):
    """Pick the most probable next token at every step, for a whole batch at once.

    Args:
        model: a ``MinTransformer``.
        source_tokens: (B, S) ids, padded with ``model.pad_id``.
        start_id, end_id: the target's start and end ids.
        max_length: the most tokens to generate.
        use_cache: encode the source once and reuse each decoder layer's keys/values (one
            new position through the decoder per step). False: re-run the model on the whole
            prefix at every step (the decoder's work grows with the prefix).
        encode_once: with ``use_cache=False``, compute the encoder output once and re-run only
            the decoder on the whole prefix: the baseline that separates the two savings of
            the cache (chapter 9).

    Returns:
        int32 NumPy array (B, max_length): generated ids, ``end_id`` included, then pad.
    """
    source = _check(model, source_tokens, max_length)
    batch = source.shape[0]
    stepper = _Stepper(model, source, start_id, max_length, use_cache, encode_once)
    output = np.full((batch, max_length), model.pad_id, dtype=np.int32)
    done = np.zeros(batch, dtype=bool)
    for t in range(max_length):
        next_ids = _log_probs(stepper.logits(), [model.pad_id, start_id]).argmax(axis=-1)
        output[:, t] = np.where(done, model.pad_id, next_ids)
        done |= next_ids == end_id
        if done.all():
            break
        stepper.advance(next_ids)
    return output


def length_penalty(length, alpha):
    """Wu et al. (2016): lp(Y) = (5 + |Y|)^alpha / (5 + 1)^alpha."""
    return ((5.0 + length) / 6.0) ** alpha


def beam_search(model, source_tokens, start_id, end_id, max_length, beam_size=4, alpha=0.6,
                use_cache=True, encode_once=False):
    """Keep the ``beam_size`` best hypotheses per sequence; rank by log-probability / lp.

    A hypothesis that emits ``end_id`` is finished and keeps its score; the search stops when
    every beam of every sequence is finished or ``max_length`` tokens were generated
    (paper section 6.1: beam size 4, alpha 0.6). The answer is the best *finished*
    hypothesis; only a sequence with none at ``max_length`` returns its best unfinished one
    (the rule of tensor2tensor's beam search: a cut-off hypothesis has not paid for its end).

    ``use_cache`` and ``encode_once`` as in ``greedy_decode``.

    Returns:
        int32 NumPy array (B, max_length): the best hypothesis per sequence, as ``greedy_decode``.
    """
    source = _check(model, source_tokens, max_length)
    batch, k = source.shape[0], beam_size
    stepper = _Stepper(model, ops.repeat(source, k, axis=0), start_id, max_length, use_cache, encode_once)
    tokens = np.full((batch, k, max_length), model.pad_id, dtype=np.int32)
    log_prob = np.full((batch, k), -np.inf)
    log_prob[:, 0] = 0.0  # all beams start identical: keep one, or the top-k repeats it k times
    length = np.zeros((batch, k))  # tokens generated, end included
    done = np.zeros((batch, k), dtype=bool)
    for t in range(max_length):
        step = _log_probs(stepper.logits(), [model.pad_id, start_id]).reshape(batch, k, -1)
        vocab = step.shape[-1]
        # A finished beam has one continuation, pad, that changes nothing.
        step[done] = -np.inf
        step[done, model.pad_id] = 0.0
        candidate = log_prob[:, :, None] + step  # (B, k, V)
        new_length = np.where(done, length, t + 1)[:, :, None]
        score = candidate / length_penalty(new_length, alpha)  # (B, k, V)
        best = np.argsort(-score.reshape(batch, -1), axis=-1, kind="stable")[:, :k]  # (B, k)
        beam, word = best // vocab, best % vocab
        rows = np.arange(batch)[:, None]
        log_prob = candidate[rows, beam, word]
        length = np.broadcast_to(new_length, candidate.shape)[rows, beam, word]
        tokens = tokens[rows, beam]
        tokens[:, :, t] = word
        done = done[rows, beam] | (word == end_id)
        if done.all():
            break
        stepper.advance(word.reshape(-1), order=(rows * k + beam).reshape(-1))
    final = log_prob / length_penalty(length, alpha)  # (B, k)
    finished = done & np.isfinite(final)  # (B, k)
    final = np.where(finished.any(axis=-1, keepdims=True) & ~finished, -np.inf, final)  # finished first
    return tokens[np.arange(batch), final.argmax(axis=-1)]
