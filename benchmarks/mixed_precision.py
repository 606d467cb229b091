"""Training throughput in float32 and mixed_float16, with and without XLA (appendix A).

    python benchmarks/mixed_precision.py [--quick]

Trains the paper's base shape (6 + 6 layers, d_model 512, 8 heads, dff 2048, a shared vocabulary
of 37,000 tokens) on one batch of sentences with ``model.fit``'s step, in the four settings of
``mt.distribute.precision_rates``, on whatever device TensorFlow finds (a GPU if there is one),
and prints target tokens per second and the ratios to float32 without XLA.
"""

import argparse
import platform
import time

import mintransformer as mt  # first: keeps TensorFlow's start-up log lines quiet
import keras  # noqa: E402
import numpy as np
import tensorflow as tf

BASE = dict(mt.distribute.PAPER_BASE, max_length=256)
QUICK = dict(BASE, num_layers=1, d_model=64, num_heads=4, dff=128, input_vocab_size=500, target_vocab_size=500)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny model: a smoke test, numbers mean nothing")
    parser.add_argument("--batch", type=int, default=None, help="sentences per batch (default: 64 on a GPU, 8 else)")
    parser.add_argument("--length", type=int, default=32, help="tokens per sentence")
    parser.add_argument("--steps", type=int, default=5, help="timed steps per setting (the fastest is kept)")
    args = parser.parse_args()
    gpus = tf.config.list_physical_devices("GPU")
    batch = args.batch or (64 if gpus else 8)
    config = QUICK if args.quick else BASE
    rng = np.random.default_rng(0)
    vocab = config["target_vocab_size"]
    inputs = (rng.integers(3, vocab, (batch, args.length)).astype("int32"),
              rng.integers(3, vocab, (batch, args.length)).astype("int32"))
    labels = rng.integers(3, vocab, (batch, args.length)).astype("int32")
    device = tf.config.experimental.get_device_details(gpus[0]).get("device_name", "GPU") if gpus else \
        f"CPU ({platform.processor() or platform.machine()}), no GPU"
    print(f"device: {device}; TensorFlow {tf.__version__}, Keras {keras.__version__}")
    print(f"model: {config}; batch {batch} x {args.length} tokens")
    start = time.perf_counter()
    rates = mt.distribute.precision_rates(lambda: mt.MinTransformer(**config), inputs, labels, steps=args.steps)
    flops = mt.distribute.training_flops(config["num_layers"], config["d_model"], config["dff"], vocab,
                                         batch * args.length, batch * args.length, args.length, args.length)
    tokens = batch * args.length
    print(f"{'policy':15} {'jit_compile':11} {'tokens/s':>10} {'TFLOP/s':>8} {'ratio':>6}")
    base = rates["float32", False]
    for (policy, jit), rate in rates.items():
        print(f"{policy:15} {str(jit):11} {rate:10,.0f} {rate / tokens * flops / 1e12:8.3f} {rate / base:6.2f}")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
