"""Decoding a trained model: greedy search, sampling and beam search, each one compiled loop.

Each decoder runs its whole loop inside one TensorFlow graph (``tf.while_loop``): no Python
between steps, no copy of the logits to NumPy, and the loop stops as soon as every sequence has
emitted its end token. Three ways of computing the next token's logits plug into the same loop:

- with the key/value cache (``use_cache=True``, the default): one new position through the
  decoder per step (``MinTransformer.decode_step``);
- the encoder output computed once, the decoder re-run on the whole prefix (``encode_once``);
- the whole model re-run on the whole prefix (``use_cache=False``).

The last two are the baselines that chapter 9 and ``benchmarks/decode_cache.py`` measure the
cache against; all three give the same tokens.

``greedy_tokens`` and ``beam_tokens`` are the loops themselves, tensors in and tensors out, to
call inside any ``tf.function`` (chapter 9 exports one in a SavedModel). ``greedy_decode``,
``sample_decode`` and ``beam_search`` compile them once per model and return NumPy arrays.
"""

import weakref

import numpy as np
import tensorflow as tf
from keras import ops

from .gpt import MinGPT

NEG_INF = float("-inf")


def _log_probs(logits, banned_ids):
    """log_softmax over the vocabulary in float64, ``banned_ids`` made impossible: (N, V) -> (N, V)."""
    logits = tf.cast(logits, tf.float64)
    banned = tf.reduce_any(tf.equal(tf.range(tf.shape(logits)[-1])[:, None], banned_ids), axis=1)  # (V,)
    return tf.nn.log_softmax(tf.where(banned, tf.constant(NEG_INF, tf.float64), logits))


def _write_column(buffer, t, column):
    """``buffer`` (..., L) with ``column`` (...) written at index ``t`` of its last axis.

    ``ops.slice_update``, as for the key/value cache: under XLA the buffer is updated in place.
    """
    return ops.slice_update(buffer, [0] * (len(buffer.shape) - 1) + [t], column[..., None])


def _stepper(model, source, start_id, max_length, use_cache, encode_once):
    """``(state, step, start_tokens)``: ``step(state, tokens (N, 1), t)`` -> ``(logits (N, V), state)``.

    ``tokens`` stand at position ``t`` of the target; the logits are for position ``t + 1``.
    ``start_tokens`` (N, 1) are the tokens fed at ``t = 0``: ``start_id``. Every tensor in ``state``
    has the batch on its first axis, so beam search can reorder it. A ``MinGPT`` continues a
    prompt instead (``_prompt_stepper``).
    """
    if isinstance(model, MinGPT):
        return _prompt_stepper(model, source, max_length, use_cache)
    start_tokens = tf.fill([tf.shape(source)[0], 1], start_id)
    if use_cache:
        def cached(caches, tokens, t):
            return model.decode_step(tokens, t, caches, source)

        return model.start_cache(source, max_length), cached, start_tokens
    context = model.encode(source) if encode_once else None  # (N, S, D)

    def uncached(prefix, tokens, t):
        prefix = _write_column(prefix, t, tokens[:, 0])  # (N, max_length): the tokens fed so far, then pad
        target = prefix[:, : t + 1]  # (N, t + 1): the whole prefix, every step
        if context is None:
            logits = model((source, target), training=False)
        else:
            logits = model.decode(target, context, source)
        return logits[:, t], prefix  # position t, not -1: XLA pads a prefix of changing length

    return tf.fill([tf.shape(source)[0], max_length], model.pad_id), uncached, start_tokens


def _prompt_stepper(model, prompt, max_length, use_cache):
    """``_stepper`` for a decoder-only model that continues ``prompt`` (N, P) by ``max_length`` tokens.

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
        sequence = _write_column(sequence, offset + t, tokens[:, 0])  # (N, P - 1 + max_length)
        logits = model(sequence[:, : offset + t + 1], training=False)  # the whole sequence, every step
        return logits[:, offset + t], sequence

    sequence = tf.concat([prompt[:, :offset], tf.fill([tf.shape(prompt)[0], max_length], model.pad_id)], axis=1)
    return sequence, uncached, start_tokens


def _reorder(state, order):
    """The per-hypothesis state in a new row order (beam search); what depends only on the
    source (cross-attention keys and values) is the same for every beam of a sequence."""
    if isinstance(state, list):  # the key/value caches
        return [dict(c, keys=tf.gather(c["keys"], order), values=tf.gather(c["values"], order),
                     is_token=tf.gather(c["is_token"], order)) for c in state]
    return tf.gather(state, order)  # the uncached prefix


def _sample(log_probs, t, temperature, top_k, top_p, seed):
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
    uniform = _uniform(seed, t, tf.shape(logits)[0])  # (N,)
    cumulative = tf.cumsum(tf.nn.softmax(logits), axis=-1)  # (N, V)
    drawn = tf.reduce_sum(tf.cast(cumulative <= uniform[:, None], tf.int32), axis=-1)  # inverse CDF
    # Rounding can leave the total just below 1: never past the last id that has a probability.
    last = tf.shape(logits)[-1] - 1 - tf.argmax(tf.reverse(logits > NEG_INF, [-1]), axis=-1, output_type=tf.int32)
    return tf.minimum(drawn, last)


def _uniform(seed, t, rows):
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


def greedy_tokens(model, source, start_id, end_id, max_length, use_cache=True, encode_once=False,
                  temperature=0.0, top_k=None, top_p=1.0, seed=0):
    """The greedy (or sampling) loop in the graph: source (B, S) int32 -> tokens (B, max_length).

    ``temperature=0`` picks the most probable id at every step; ``temperature > 0`` samples
    (see ``sample_decode``). Call it inside a ``tf.function``; the arguments other than
    ``source`` are Python values.
    """
    batch = tf.shape(source)[0]
    state, step, start_tokens = _stepper(model, source, start_id, max_length, use_cache, encode_once)
    banned = [i for i in (model.pad_id, start_id) if i is not None]  # never generated

    def body(t, tokens, state, output, done):
        logits, state = step(state, tokens, t)  # (B, V)
        log_probs = _log_probs(logits, banned)
        if temperature:
            next_ids = _sample(log_probs, t, temperature, top_k, top_p, seed)
        else:
            next_ids = tf.argmax(log_probs, axis=-1, output_type=tf.int32)  # (B,)
        next_ids = tf.where(done, model.pad_id, next_ids)  # a finished sequence only pads
        output = _write_column(output, t, next_ids)  # (B, max_length)
        return t + 1, next_ids[:, None], state, output, done | tf.equal(next_ids, end_id)

    def running(t, tokens, state, output, done):
        return tf.logical_and(t < max_length, tf.logical_not(tf.reduce_all(done)))

    start = (tf.constant(0), start_tokens, state, tf.fill([batch, max_length], model.pad_id),
             tf.zeros([batch], tf.bool))
    return tf.while_loop(running, body, start)[3]


def length_penalty(length, alpha):
    """Wu et al. (2016): lp(Y) = (5 + |Y|)^alpha / (5 + 1)^alpha."""
    return ((5.0 + length) / 6.0) ** alpha


def beam_tokens(model, source, start_id, end_id, max_length, beam_size=4, alpha=0.6,
                use_cache=True, encode_once=False):
    """The beam search loop in the graph: source (B, S) int32 -> tokens (B, max_length).

    See ``beam_search``. Call it inside a ``tf.function``; the arguments other than ``source``
    are Python values.
    """
    batch, k = tf.shape(source)[0], beam_size
    state, step, start_tokens = _stepper(model, tf.repeat(source, k, axis=0), start_id, max_length, use_cache,
                                        encode_once)
    banned = [i for i in (model.pad_id, start_id) if i is not None]
    first = tf.range(batch)[:, None] * k  # (B, 1): row of each sequence's first beam

    def body(*old):
        t, words, state, tokens, log_prob, length, done = old
        logits, state = step(state, words, t)  # (B k, V)
        step_lp = tf.reshape(_log_probs(logits, banned), (batch, k, -1))  # (B, k, V)
        vocab = tf.shape(step_lp)[-1]
        # A finished beam has one continuation, pad, that changes nothing.
        only_pad = tf.where(tf.equal(tf.range(vocab), model.pad_id), 0.0, NEG_INF)  # (V,)
        step_lp = tf.where(done[:, :, None], tf.cast(only_pad, tf.float64), step_lp)
        candidate = log_prob[:, :, None] + step_lp  # (B, k, V)
        new_length = tf.where(done, length, tf.cast(t + 1, tf.float64))[:, :, None]  # (B, k, 1)
        score = candidate / length_penalty(new_length, alpha)  # (B, k, V)
        # top_k breaks ties towards the lower index, as a stable sort would.
        best = tf.math.top_k(tf.reshape(score, (batch, -1)), k).indices  # (B, k)
        beam, word = best // vocab, best % vocab
        log_prob = tf.gather(tf.reshape(candidate, (batch, -1)), best, batch_dims=1)
        length = tf.gather(tf.reshape(tf.broadcast_to(new_length, tf.shape(candidate)), (batch, -1)),
                           best, batch_dims=1)
        tokens = _write_column(tf.gather(tokens, beam, batch_dims=1), t, word)  # (B, k, L): each beam's history
        done = tf.gather(done, beam, batch_dims=1) | tf.equal(word, end_id)
        state = _reorder(state, tf.reshape(first + beam, [-1]))
        new = (t + 1, tf.reshape(word, (-1, 1)), state, tokens, log_prob, length, done)
        # Gathers lose the static batch size; the loop needs every shape unchanged.
        return tf.nest.map_structure(lambda n, o: tf.ensure_shape(n, o.shape), new, old)

    def running(t, words, state, tokens, log_prob, length, done):
        return tf.logical_and(t < max_length, tf.logical_not(tf.reduce_all(done)))

    # All beams start identical: keep one, or the first top-k would repeat it k times.
    log_prob = tf.tile(tf.where(tf.range(k) == 0, 0.0, NEG_INF)[None], [batch, 1])
    start = (tf.constant(0), start_tokens, state,
             tf.fill([batch, k, max_length], model.pad_id), tf.cast(log_prob, tf.float64),
             tf.zeros([batch, k], tf.float64), tf.zeros([batch, k], tf.bool))
    _, _, _, tokens, log_prob, length, done = tf.while_loop(running, body, start)
    final = log_prob / length_penalty(length, alpha)  # (B, k)
    finished = done & tf.math.is_finite(final)
    # The best finished hypothesis; a cut-off one only where none finished.
    final = tf.where(tf.reduce_any(finished, axis=-1, keepdims=True) & ~finished,
                     tf.constant(NEG_INF, tf.float64), final)
    best = tf.math.top_k(final, 1).indices  # (B, 1)
    return tf.gather(tokens, best, batch_dims=1)[:, 0]


# One compiled function per model and decoding setting, built on first use (tracing costs
# seconds). The functions reach the model through a weak reference only: a value that held the
# model strongly would keep its own key alive, and every model ever decoded would stay in memory.
_COMPILED = weakref.WeakKeyDictionary()


def _check_sampling(temperature, top_k, top_p, vocab_size):
    """Clear errors for settings that would sample from nothing, or divide by zero."""
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0 to sample, got {temperature}; for the limit, temperature -> 0, "
                         "decode greedily (greedy_decode, greedy_generate).")
    if top_k is not None and (int(top_k) != top_k or not 1 <= top_k <= vocab_size):
        raise ValueError(f"top_k must be an integer from 1 to the vocabulary's {vocab_size} (or None: no top-k), "
                         f"got {top_k}.")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1] (1: no top-p), got {top_p}.")


def _run(loop, model, source_tokens, max_length, **settings):
    source = np.asarray(source_tokens, dtype=np.int32)
    if source.ndim != 2:
        raise ValueError(f"source_tokens must have shape (B, S), got {source.shape}.")
    if max_length > model.max_length:
        raise ValueError(f"max_length={max_length} exceeds the model's max_length={model.max_length}.")
    return _compiled(loop, model, max_length, settings)(tf.constant(source)).numpy()


def _compiled(loop, model, max_length, settings, prompt_length=None):
    """The loop compiled for ``model`` and ``settings``: a function of ``source`` (B, S).

    A decoder-only model's loop is compiled for one ``prompt_length`` P: its input is (B, P).
    """
    settings = dict(settings, max_length=max_length)
    key = (loop.__name__, prompt_length, tuple(sorted(settings.items())))
    functions = _COMPILED.setdefault(model, {})
    if key not in functions:
        # The cached loop has fixed shapes, so XLA compiles it whole: fused steps, and the
        # cache written in place (about 3x faster on a CPU, benchmarks/README.md). XLA is made
        # for fixed shapes, and the uncached baselines slice a prefix whose length changes at
        # every step: they run as an ordinary TensorFlow graph, the baselines they stand for.
        signature = None if prompt_length is None else [tf.TensorSpec([None, prompt_length], tf.int32)]
        functions[key] = tf.function(_Loop(loop, model, settings), reduce_retracing=True,
                                     jit_compile=settings["use_cache"], input_signature=signature)
    return functions[key]


class _Loop:
    """A decoding loop for one model and one setting: ``source -> tokens``, to compile.

    A callable object rather than a closure, so that TensorFlow counts the traces of each
    compiled function apart (it counts closures by their code, and warns of "retracing").
    """

    def __init__(self, loop, model, settings):
        self.loop, self.model, self.settings = loop, weakref.ref(model), settings

    def __call__(self, source):
        return self.loop(self.model(), source, **self.settings)


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
    return _run(greedy_tokens, model, source_tokens, max_length, start_id=start_id, end_id=end_id,
                use_cache=use_cache, encode_once=encode_once)


def sample_decode(model, source_tokens, start_id, end_id, max_length, temperature=1.0, top_k=None,
                  top_p=1.0, seed=0, use_cache=True):
    """Draw each next token at random, for a whole batch at once; reproducible for a ``seed``.

    The next-token distribution is ``softmax(log_probs / temperature)`` (``temperature`` < 1
    sharpens it, > 1 flattens it), restricted to the ``top_k`` most probable ids and then to
    the smallest set of most probable ids whose probabilities sum to at least ``top_p``
    (nucleus sampling, Holtzman et al., 2020), and renormalised. Returns as ``greedy_decode``.
    """
    _check_sampling(temperature, top_k, top_p, model.target_vocab_size)
    return _run(greedy_tokens, model, source_tokens, max_length, start_id=start_id, end_id=end_id,
                use_cache=use_cache, temperature=float(temperature), top_k=top_k, top_p=float(top_p),
                seed=int(seed))


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
    return _run(beam_tokens, model, source_tokens, max_length, start_id=start_id, end_id=end_id,
                beam_size=beam_size, alpha=alpha, use_cache=use_cache, encode_once=encode_once)


def _run_prompts(model, prompts, max_new_tokens, **settings):
    """Continue each prompt (a list of id lists, or a (B, P) array) of a decoder-only model.

    Prompts of one length run as one batch through the compiled loop (a loop per length: its
    shapes are fixed); the rows come back in the order of ``prompts``.
    """
    prompts = [list(np.asarray(p, dtype=np.int32).reshape(-1)) for p in prompts]
    if not prompts or min(len(p) for p in prompts) < 1:
        raise ValueError("every prompt needs at least one token.")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}.")
    longest = max(len(p) for p in prompts)
    if longest > model.max_length:
        raise ValueError(f"a prompt of {longest} tokens is longer than the context, max_length={model.max_length}.")
    if longest + max_new_tokens - 1 > model.max_length:  # the last new token is never fed
        raise ValueError(f"a prompt of {longest} tokens and max_new_tokens={max_new_tokens} do not fit the "
                         f"context, max_length={model.max_length}: the model would read {longest + max_new_tokens - 1} "
                         f"tokens; generate at most {model.max_length - longest + 1}.")
    settings = dict(settings, start_id=None, end_id=-1 if settings["end_id"] is None else settings["end_id"])
    out = np.full((len(prompts), max_new_tokens), model.pad_id, dtype=np.int32)
    for length in sorted({len(p) for p in prompts}):
        rows = [i for i, p in enumerate(prompts) if len(p) == length]
        batch = tf.constant(np.array([prompts[i] for i in rows], dtype=np.int32))  # (n, length)
        out[rows] = _compiled(greedy_tokens, model, max_new_tokens, settings, length)(batch).numpy()
    return out


def greedy_generate(model, prompts, max_new_tokens, end_id=None, use_cache=True):
    """Continue each prompt with the most probable next token, ``max_new_tokens`` times.

    Args:
        model: a decoder-only ``MinGPT``.
        prompts: a list of id lists (lengths may differ), or an int array (B, P). No padding:
            every id is part of the prompt.
        max_new_tokens: the most tokens to generate. The model reads the prompt and all of them
            but the last, ``P + max_new_tokens - 1`` tokens, which must fit its ``max_length``.
        end_id: a sequence that emits it is finished, and pads afterwards; None never stops early.
        use_cache: keep each layer's keys and values (the default); False re-reads the whole
            sequence at every step, the baseline of chapter 11's timing.

    Returns:
        int32 NumPy array (B, max_new_tokens): the generated ids only, ``end_id`` included, then
        pad. The loop is ``greedy_tokens``, compiled as for ``greedy_decode``.
    """
    return _run_prompts(model, prompts, max_new_tokens, end_id=end_id, use_cache=use_cache, encode_once=False)


def sample_generate(model, prompts, max_new_tokens, end_id=None, temperature=1.0, top_k=None, top_p=1.0,
                    seed=0, use_cache=True):
    """Continue each prompt by drawing each next token at random; reproducible for a ``seed``.

    The distribution is reshaped by ``temperature``, ``top_k`` and ``top_p`` as in
    ``sample_decode``; the other arguments and the result are as in ``greedy_generate``. The
    draw of a row depends on the seed, the step and the row's place among the prompts of its
    length, so the same prompts in the same order and seed give the same tokens. (Each seed
    compiles its own loop, which takes seconds the first time.)
    """
    _check_sampling(temperature, top_k, top_p, model.vocab_size)
    return _run_prompts(model, prompts, max_new_tokens, end_id=end_id, use_cache=use_cache, encode_once=False,
                        temperature=float(temperature), top_k=top_k, top_p=float(top_p), seed=int(seed))
