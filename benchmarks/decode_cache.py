"""Cached versus uncached greedy decoding: time per batch at several output lengths.

    python benchmarks/decode_cache.py [--repeats 3]

Both decoders run the same randomly initialised MinTransformer on the same batch, each step
compiled with tf.function; the script checks that they return identical tokens and prints
the measured speed-up. The end id is one the model never emits, so every run decodes the
full length.
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
    print(f"{'length':>6} {'uncached s':>11} {'cached s':>9} {'speed-up':>9} identical")
    for length in args.lengths:
        run = lambda cache: mt.greedy_decode(model, source, 1, -1, length, use_cache=cache)  # noqa: E731
        slow, slow_tokens = timed(lambda: run(False), args.repeats)
        fast, fast_tokens = timed(lambda: run(True), args.repeats)
        same = bool(np.array_equal(slow_tokens, fast_tokens))
        print(f"{length:>6} {slow:>11.3f} {fast:>9.3f} {slow / fast:>8.1f}x {same}")


if __name__ == "__main__":
    main()
