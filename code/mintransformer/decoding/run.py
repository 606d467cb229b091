"""The public decoders: check the arguments in Python, run a compiled loop, return NumPy arrays.

Each loop is compiled once per model, setting and source (or prompt) length, on first use
(tracing costs seconds). XLA compiles a program for each new input shape, so a new batch size
compiles again too.
"""

import weakref

import numpy as np
import tensorflow as tf

from .beam import beam_tokens
from .checks import as_length, check_lengths
from .loop import decode_tokens
from .sampling import check_sampling

# The functions reach the model through a weak reference only: a value that held the model
# strongly would keep its own key alive, and every model ever decoded would stay in memory.
_COMPILED = weakref.WeakKeyDictionary()


def _source_array(model, source_tokens):
    """``source_tokens`` as an int32 array (B, S), after checks that every call makes in Python."""
    source = np.asarray(source_tokens)
    if source.ndim != 2:
        raise ValueError(f"source_tokens must have shape (B, S), got {source.shape}.")
    if source.size and not np.issubdtype(source.dtype, np.integer):
        raise TypeError(f"source_tokens must hold integer ids, got dtype {source.dtype}.")
    if source.size and (source.min() < 0 or source.max() >= model.input_vocab_size):
        raise ValueError(f"source_tokens must be ids from 0 to {model.input_vocab_size - 1}, got ids from "
                         f"{source.min()} to {source.max()}.")
    if source.shape[1] > model.max_length:  # here in Python, on every call: the compiled loop cannot raise
        raise ValueError(f"a source of {source.shape[1]} tokens is longer than the model's "
                         f"max_length={model.max_length}: its positional table has no row for the later positions.")
    return source.astype(np.int32)


def _token_id(value, name, vocab_size):
    """A token id given as a Python int, a NumPy integer or an eager integer tensor, as a Python int
    from 0 to ``vocab_size - 1``: a loop compiled by XLA would clamp an id past the vocabulary."""
    if tf.is_tensor(value):
        try:
            value = value.numpy()
        except (AttributeError, NotImplementedError):
            raise TypeError(f"{name} must be known when the decoding loop is built, not a symbolic tensor.") from None
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer token id, got {value!r}.")
    if not 0 <= value < vocab_size:
        raise ValueError(f"{name} must be an id from 0 to {vocab_size - 1}, got {value}.")
    return int(value)


def _target_ids(model, start_id, end_id):
    """``start_id`` and ``end_id`` of an encoder-decoder, checked against its target vocabulary;
    ``end_id`` -1 (an id that no model writes: every sequence runs to ``max_length``) or None
    (the same) is allowed."""
    start_id = _token_id(start_id, "start_id", model.target_vocab_size)
    if end_id is None or (not isinstance(end_id, (bool, np.bool_)) and isinstance(end_id, (int, np.integer))
                          and end_id == -1):
        return start_id, -1
    return start_id, _token_id(end_id, "end_id", model.target_vocab_size)


def run_loop(loop, model, source_tokens, max_length, **settings):
    """Decode ``source_tokens`` with ``loop`` compiled for this model, setting and source length."""
    source = _source_array(model, source_tokens)
    _, max_length = check_lengths(model, source, max_length)
    return compiled_loop(loop, model, dict(settings, max_length=max_length), source.shape[1])(source).numpy()


def compiled_loop(loop, model, settings, length):
    """The loop compiled for ``model``, ``settings`` and inputs (B, ``length``): a source, or a prompt.

    Built on first use and kept. The input's length is part of the signature, so the loop knows
    it when it is built, and ``check_lengths`` can check it then, under XLA too.
    """
    key = (loop.__name__, length, tuple(sorted(settings.items())))
    functions = _COMPILED.setdefault(model, {})
    if key not in functions:
        # The cached loop has fixed shapes, so XLA compiles it whole: fused steps, and the
        # cache written in place (about 3x faster on a CPU, benchmarks/README.md). XLA is made
        # for fixed shapes, and the uncached baselines slice a prefix whose length changes at
        # every step: they run as an ordinary TensorFlow graph, the baselines they stand for.
        functions[key] = tf.function(_Loop(loop, model, settings), jit_compile=settings["use_cache"],
                                     input_signature=[tf.TensorSpec([None, length], tf.int32)])
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
        source_tokens: (B, S) ids, padded with ``model.pad_id``; S at most ``model.max_length``.
        start_id, end_id: the target's start and end ids; ``end_id=-1`` (or None) never stops
            early, every sequence gets ``max_length`` tokens (for timing).
        max_length: the most tokens to generate, at most ``model.max_length``.
        use_cache: encode the source once and reuse each decoder layer's keys/values (one
            new position through the decoder per step). False: re-run the model on the whole
            prefix at every step (the decoder's work grows with the prefix).
        encode_once: with ``use_cache=False``, compute the encoder output once and re-run only
            the decoder on the whole prefix: the baseline that separates the two savings of
            the cache (chapter 9).

    Returns:
        int32 NumPy array (B, max_length): generated ids, ``end_id`` included, then pad.

    Raises ValueError, on every call, for a source or a ``max_length`` longer than the model's.
    """
    start_id, end_id = _target_ids(model, start_id, end_id)
    return run_loop(decode_tokens, model, source_tokens, max_length, start_id=start_id, end_id=end_id,
                use_cache=use_cache, encode_once=encode_once)


def sample_decode(model, source_tokens, start_id, end_id, max_length, temperature=1.0, top_k=None,
                  top_p=1.0, seed=0, use_cache=True):
    """Draw each next token at random, for a whole batch at once; reproducible for a ``seed``.

    The next-token distribution is ``softmax(log_probs / temperature)`` (``temperature`` < 1
    sharpens it, > 1 flattens it), restricted to the ``top_k`` most probable ids and then to
    the smallest set of most probable ids whose probabilities sum to at least ``top_p``
    (nucleus sampling, Holtzman et al., 2020), and renormalised. Returns as ``greedy_decode``.
    """
    top_k = check_sampling(temperature, top_k, top_p, model.target_vocab_size)
    start_id, end_id = _target_ids(model, start_id, end_id)
    return run_loop(decode_tokens, model, source_tokens, max_length, start_id=start_id, end_id=end_id,
                use_cache=use_cache, temperature=float(temperature), top_k=top_k, top_p=float(top_p),
                seed=int(seed))


def beam_search(model, source_tokens, start_id, end_id, max_length, beam_size=4, alpha=0.6,
                use_cache=True, encode_once=False):
    """Beam search: the ``beam_size`` best hypotheses per sequence, ranked by log-probability / lp.

    Two sets of ``beam_size`` hypotheses: the alive ones, extended at every step, and the
    finished ones, which wrote ``end_id`` and keep their score s(Y) = log P(Y) / lp(|Y|)
    (Wu et al., 2016; paper section 6.1: beam size 4, alpha 0.6). The search stops after
    ``max_length`` tokens, or once no alive hypothesis can still beat the worst finished one
    (tensor2tensor's rule). The answer is the best finished hypothesis; only a sequence with
    none returns its most probable cut-off one.

    ``alpha`` must be >= 0; ``use_cache`` and ``encode_once`` as in ``greedy_decode``.

    Returns:
        int32 NumPy array (B, max_length): the best hypothesis per sequence, as ``greedy_decode``.
    """
    beam_size = as_length(beam_size, "beam_size")
    if not alpha >= 0:
        raise ValueError(f"alpha must be >= 0 (0: no length penalty), got {alpha}.")
    start_id, end_id = _target_ids(model, start_id, end_id)
    return run_loop(beam_tokens, model, source_tokens, max_length, start_id=start_id, end_id=end_id,
                beam_size=beam_size, alpha=float(alpha), use_cache=use_cache, encode_once=encode_once)


def _run_prompts(model, prompts, max_new_tokens, **settings):
    """Continue each prompt (a list of id lists, or a (B, P) array) of a decoder-only model.

    Prompts of one length run as one batch through the compiled loop (a loop per length: its
    shapes are fixed); the rows come back in the order of ``prompts``.
    """
    prompts = [np.asarray(p).reshape(-1) for p in prompts]
    if not prompts or min(len(p) for p in prompts) < 1:
        raise ValueError("every prompt needs at least one token.")
    for p in prompts:  # XLA would clamp an id past the vocabulary, and int32 would truncate 3.7 to 3
        if not np.issubdtype(p.dtype, np.integer):
            raise TypeError(f"prompts must hold integer ids, got dtype {p.dtype}.")
        if p.min() < 0 or p.max() >= model.vocab_size:
            raise ValueError(f"prompts must hold ids from 0 to {model.vocab_size - 1}, got ids from {p.min()} "
                             f"to {p.max()}.")
    prompts = [list(p.astype(np.int32)) for p in prompts]
    if settings["end_id"] is not None:
        settings["end_id"] = _token_id(settings["end_id"], "end_id", model.vocab_size)
    max_new_tokens = as_length(max_new_tokens, "max_new_tokens")
    longest = max(len(p) for p in prompts)
    if longest > model.max_length:
        raise ValueError(f"a prompt of {longest} tokens is longer than the context, max_length={model.max_length}.")
    if longest + max_new_tokens - 1 > model.max_length:  # the last new token is never fed
        raise ValueError(f"a prompt of {longest} tokens and max_new_tokens={max_new_tokens} do not fit the "
                         f"context, max_length={model.max_length}: the model would read {longest + max_new_tokens - 1} "
                         f"tokens; generate at most {model.max_length - longest + 1}.")
    settings = dict(settings, start_id=None, end_id=-1 if settings["end_id"] is None else settings["end_id"],
                    max_length=max_new_tokens)
    out = np.full((len(prompts), max_new_tokens), model.pad_id, dtype=np.int32)
    for length in sorted({len(p) for p in prompts}):
        rows = [i for i, p in enumerate(prompts) if len(p) == length]
        batch = tf.constant(np.array([prompts[i] for i in rows], dtype=np.int32))  # (n, length)
        out[rows] = compiled_loop(decode_tokens, model, settings, length)(batch).numpy()
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
            sequence at every step, the baseline of chapter 12's timing.

    Returns:
        int32 NumPy array (B, max_new_tokens): the generated ids only, ``end_id`` included, then
        pad. The loop is ``decode_tokens``, compiled as for ``greedy_decode``.
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
    top_k = check_sampling(temperature, top_k, top_p, model.vocab_size)
    return _run_prompts(model, prompts, max_new_tokens, end_id=end_id, use_cache=use_cache, encode_once=False,
                        temperature=float(temperature), top_k=top_k, top_p=float(top_p), seed=int(seed))
