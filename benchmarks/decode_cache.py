"""Greedy decoding six ways, side by side: time per batch at several output lengths.

    python benchmarks/decode_cache.py [--quick] [--repeats 3] [--lengths 16 32 64 128]

Our randomly initialised MinTransformer decodes one batch four ways:

a. uncached: the whole model (encoder and decoder) on the whole prefix at every step
   (``mt.greedy_decode(..., use_cache=False)``);
b. encode once: the encoder output computed once, the decoder re-run on the whole prefix
   (``use_cache=False, encode_once=True``);
c. cached, Python loop: encode once, keep every decoder layer's keys and values, one compiled
   step per token driven from Python (the package's loop as of commit e83c68a, copied below
   as ``python_loop_greedy_decode``);
d. cached, compiled loop: the package's loop now (``use_cache=True``).

and e. the same shape built from KerasHub's layers (``keras_hub_transformer.py``), decoded by
``generate()`` with ``keras_hub.samplers.GreedySampler`` and KerasHub's key/value caches,
compiled as KerasHub compiles it by default (``jit_compile="auto"``); f. the same, with the
same weights, compiled with XLA (``jit_compile=True``).

a -> b is what not re-encoding the source saves, b -> c what not re-running the decoder over
the prefix saves, c -> d what compiling the loop saves. a to d must return identical tokens,
and so must e and f; e and f are a different model (their own random weights), so their tokens
are not compared with ours. The end id is one no model emits, so every run decodes the full
length. Each time is the median of
``--repeats`` runs after a warm-up run that traces the compiled functions.
"""

import argparse
import statistics
import time
import weakref

import mintransformer as mt  # first: keeps TensorFlow's start-up log lines quiet
import keras
import keras_hub
import numpy as np
import tensorflow as tf
from keras_hub_transformer import KerasHubTransformer, keras_hub_greedy_decode

# c. The cached greedy decoder as the package had it up to commit e83c68a
# (code/mintransformer/decoding.py: _compiled, _log_probs, _Stepper, greedy_decode), cut to the
# cached path. The package's loop is now one compiled tf.while_loop; this copy stays here, not
# in the package, as the baseline that measures what compiling the loop saves: each step calls
# the compiled decode_step from Python, copies the logits to NumPy and picks the token there.
# It relies on model.start_cache(source, max_length) and
# model.decode_step(tokens, position, caches, source): adapt it here if they change.
_STEP = weakref.WeakKeyDictionary()  # model -> compiled step; weak, so models can be freed


def _compiled_step(model):
    if model not in _STEP:
        ref = weakref.ref(model)
        # One new position; fixed shapes, so one trace per batch size and length.
        _STEP[model] = tf.function(lambda *args: ref().decode_step(*args), reduce_retracing=True)
    return _STEP[model]


def _log_probs(logits, banned_ids):
    """log_softmax over the vocabulary, with ``banned_ids`` made impossible. (N, V) -> NumPy (N, V)."""
    logits = np.array(logits, dtype=np.float64)
    logits[:, banned_ids] = -np.inf
    logits -= logits.max(axis=-1, keepdims=True)
    return logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))


class _CachedStepper:
    """Next-token logits for a batch of growing prefixes, with the key/value cache."""

    def __init__(self, model, source, start_id, max_length):
        self.model, self.source = model, source
        self.step = _compiled_step(model)
        self.prefix = np.full((source.shape[0], 1), start_id, dtype=np.int32)  # (B, t + 1)
        self.caches = model.start_cache(source, max_length)

    def logits(self):
        """Logits (B, V) for the position after the current prefix."""
        position = self.prefix.shape[1] - 1
        logits, self.caches = self.step(
            tf.constant(self.prefix[:, -1:]), tf.constant(position), self.caches, self.source
        )
        return logits.numpy()

    def advance(self, tokens):
        """Append ``tokens`` (B,)."""
        self.prefix = np.concatenate([self.prefix, tokens[:, None].astype(np.int32)], axis=1)


def python_loop_greedy_decode(model, source_tokens, start_id, end_id, max_length):
    """The old ``greedy_decode(..., use_cache=True)``: a Python loop over compiled steps.

    Returns:
        int32 NumPy array (B, max_length): generated ids, ``end_id`` included, then pad.
    """
    source = tf.constant(np.asarray(source_tokens, dtype=np.int32))
    batch = source.shape[0]
    stepper = _CachedStepper(model, source, start_id, max_length)
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


def timed(fn, repeats):
    fn()  # warm-up: traces the compiled functions for this shape
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 32, 64, 128])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--quick", action="store_true", help="smoke test: lengths 8 and 16, 1 repeat")
    args = parser.parse_args()
    if args.quick:
        args.lengths, args.repeats = [8, 16], 1

    start_id, end_id = 1, -1  # no model emits -1: every run decodes the full length
    shape = dict(num_layers=2, d_model=128, num_heads=4, dff=512)
    keras.utils.set_random_seed(0)
    config = dict(shape, input_vocab_size=64, target_vocab_size=64,
                  max_length=max(129, max(args.lengths) + 1), dropout=0.1)
    model = mt.MinTransformer(**config)
    hub = KerasHubTransformer(**shape, vocab_size=64, dropout=0.1)
    hub.compile(sampler=keras_hub.samplers.GreedySampler())  # jit_compile="auto", as KerasHub's default
    source = np.random.RandomState(0).randint(3, 64, size=(args.batch, 32)).astype("int32")
    model((source, source[:, :1]))
    hub((source, source[:, :2]))  # two target positions: one would make Keras warn about its softmax
    hub_xla = KerasHubTransformer(**shape, vocab_size=64, dropout=0.1)  # the same weights, with XLA
    hub_xla((source, source[:, :2]))
    hub_xla.set_weights(hub.get_weights())
    hub_xla.compile(sampler=keras_hub.samplers.GreedySampler(), jit_compile=True)
    ours, theirs = model.count_params(), hub.count_params()
    print(f"model: {config}; batch {args.batch}, source length 32, {keras.backend.backend()} backend")
    print(f"weights: ours {ours:,}, KerasHub {theirs:,} (difference {theirs - ours:+,}); "
          f"KerasHub {keras_hub.__version__}, generate compiled with jit_compile={hub.jit_compile}")
    modes = {
        "a": lambda n: mt.greedy_decode(model, source, start_id, end_id, n, use_cache=False),
        "b": lambda n: mt.greedy_decode(model, source, start_id, end_id, n, use_cache=False,
                                        encode_once=True),
        "c": lambda n: python_loop_greedy_decode(model, source, start_id, end_id, n),
        "d": lambda n: mt.greedy_decode(model, source, start_id, end_id, n, use_cache=True),
        "e": lambda n: keras_hub_greedy_decode(hub, source, start_id, end_id, n),
        "f": lambda n: keras_hub_greedy_decode(hub_xla, source, start_id, end_id, n),
    }
    print("seconds per batch: a uncached, b encode once, c cached Python loop, d cached compiled loop, "
          "e KerasHub generate, f KerasHub generate with jit_compile=True")
    print(f"{'length':>6} {'a s':>7} {'b s':>7} {'c s':>7} {'d s':>7} {'e s':>7} {'f s':>7} "
          f"{'a/d':>6} {'b/d':>6} {'c/d':>6} {'e/d':>6} {'f/d':>6} identical a-d, e-f")
    for length in args.lengths:
        seconds, tokens = {}, {}
        for name, decode in modes.items():
            seconds[name], tokens[name] = timed(lambda: decode(length), args.repeats)  # noqa: B023
        assert tokens["e"].shape == tokens["a"].shape, (tokens["e"].shape, tokens["a"].shape)
        same = all(np.array_equal(tokens[name], tokens["a"]) for name in "bcd")
        same_hub = np.array_equal(tokens["e"], tokens["f"])
        s = seconds
        print(f"{length:>6} " + " ".join(f"{s[name]:>7.3f}" for name in "abcdef") + " "
              + " ".join(f"{s[name] / s['d']:>5.1f}x" for name in "abcef") + f" {same}, {same_hub}")


if __name__ == "__main__":
    main()
