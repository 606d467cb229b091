"""Greedy decoding three ways: time per batch at several output lengths.

    python benchmarks/decode_cache.py [--repeats 3]

1. uncached: the whole model (encoder and decoder) on the whole prefix at every step;
2. encode once: the encoder output computed once, the decoder re-run on the whole prefix;
3. cached: encode once and keep every decoder layer's keys and values (one new position per step).

The key/value cache brings two savings at once; the middle decoder separates them: 1 -> 2 is
what not re-encoding the source saves, 2 -> 3 what not re-running the decoder over the prefix
saves. All three run the same randomly initialised MinTransformer on the same batch, each step
compiled with tf.function; the script checks that they return identical tokens. The end id is
one the model never emits, so every run decodes the full length.
"""

import argparse
import statistics
import time

import mintransformer as mt  # first: keeps TensorFlow's start-up log lines quiet
import keras
import numpy as np


def timed(fn, repeats):
    fn()  # warm-up: traces the compiled step for this shape
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
    args = parser.parse_args()

    keras.utils.set_random_seed(0)
    config = dict(num_layers=2, d_model=128, num_heads=4, dff=512, input_vocab_size=64,
                  target_vocab_size=64, max_length=max(args.lengths), dropout=0.1)
    model = mt.MinTransformer(**config)
    source = np.random.RandomState(0).randint(3, 64, size=(args.batch, 32)).astype("int32")
    model((source, source[:, :1]))
    print(f"model: {config}; batch {args.batch}, source length 32, {keras.backend.backend()} backend")
    print(f"{'length':>6} {'uncached s':>11} {'encode once s':>14} {'cached s':>9} "
          f"{'1->2':>6} {'2->3':>6} {'1->3':>6} identical")
    modes = {"uncached": dict(use_cache=False), "encode once": dict(use_cache=False, encode_once=True),
             "cached": dict(use_cache=True)}
    for length in args.lengths:
        seconds, tokens = {}, {}
        for name, options in modes.items():
            run = lambda: mt.greedy_decode(model, source, 1, -1, length, **options)  # noqa: E731
            seconds[name], tokens[name] = timed(run, args.repeats)
        same = all(np.array_equal(t, tokens["uncached"]) for t in tokens.values())
        full, once, cached = seconds["uncached"], seconds["encode once"], seconds["cached"]
        print(f"{length:>6} {full:>11.3f} {once:>14.3f} {cached:>9.3f} "
              f"{full / once:>5.1f}x {once / cached:>5.1f}x {full / cached:>5.1f}x {same}")

if __name__ == "__main__":
    main()
