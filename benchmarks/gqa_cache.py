"""Grouped-query attention against multi-head attention: the key/value cache's memory and cached decoding's speed.

    python benchmarks/gqa_cache.py [--quick] [--repeats 3] [--kv-heads 8 4 2 1] [--llama]

One decoder-only ``mt.MinGPT`` shape, built four times with a different number of key/value
heads h_kv in every layer's self-attention (chapter 13): h_kv = h (multi-head attention, the
paper's), h/2 and h/4 (grouped-query attention, Ainslie et al., 2023) and 1 (multi-query
attention, Shazeer, 2019). Every other switch is the package's default (``--llama`` uses
``mt.LLAMA_STYLE`` instead: RMSNorm, rotary positions, SwiGLU, no biases).

1. Memory: the bytes of the key and value tensors that ``model.start_cache(batch, length)``
   allocates, asserted equal to 2 * layers * batch * h_kv * length * d_k * bytes per value, in
   float32 and in float16 (a ``dtype="mixed_float16"`` model, whose cache is float16); the
   ratio to multi-head attention. The cache's ``is_token`` flags (one byte per position and row
   and layer, the same for every h_kv) are printed apart.
2. Speed: each model continues the same prompts (``--batch`` rows of ``--prompt`` random
   tokens; by default one token, so that there is no prefill and every step is a one-token
   decoding step) by ``--new-tokens`` N tokens with ``mt.greedy_generate``, the package's cached
   decoding loop, one ``tf.while_loop`` compiled by XLA; tokens per second = batch * N / seconds.
   Each time is the median of ``--repeats`` rounds after a warm-up round that compiles the
   loops; the models take turns within each round, so that other work on the machine slows all
   of them alike, and the fastest and slowest rounds are printed beside it. Weights are random
   (the tokens of different models are not compared); no end id, so every run decodes all N.

Also printed: the weight count of each (``mt.parameter_count``, asserted equal to
``count_params()``), and the bytes that one decoding step must read at least: the weights (but
the position table and an untied input embedding, of which it reads a few rows) and the whole
cache, every one of its ``length`` slots (a step attends over all of them, the empty ones masked).
"""

import argparse
import os
import platform
import statistics
import time

import mintransformer as mt  # first: keeps TensorFlow's start-up log lines quiet
import keras
import numpy as np
import tensorflow as tf

CAVEATS = """\
What a CPU measurement can and cannot show:
- The memory column holds on any device: it is what start_cache allocates, and the formula.
- The speed columns are this CPU's. A decoding step reads every weight and the whole cache to
  produce one token per row, a few operations per byte read; on a GPU such a step is limited
  by memory bandwidth, its time roughly the bytes it reads ('read/step') over the bandwidth, so
  a smaller cache saves time in proportion to its share of those bytes ('cache share'). On a
  CPU the matrix products, the loop's fixed costs and other work on the machine count too,
  and at these sizes the cache is not all of the bytes read: the ratios here are not a GPU's.
- The package's attention stacks the h/h_kv query heads that share a key/value head and
  multiplies them by that head's keys and values in one product: a step reads the cache as it
  is, with no copy of it repeated h/h_kv times.
- With a one-token prompt there is no prefill: every step here is a one-token decoding step.
  A prefill reads the whole prompt in one pass, many tokens per weight read, and is compute-
  bound rather than memory-bound; with --prompt above 1 the times include one."""


def cache_bytes(caches):
    """Bytes of the key and value tensors of every layer's cache, and of the ``is_token`` flags."""
    def size(tensor):  # elements times bytes per element, of the tensor as allocated
        return int(tf.size(tensor)) * tf.as_dtype(tensor.dtype).size

    keys_values = sum(size(c[name]) for c in caches for name in ("keys", "values"))
    return keys_values, sum(size(c["is_token"]) for c in caches)


def formula_bytes(layers, batch, kv_heads, length, d_k, bytes_per_value):
    """2 (keys and values) * layers * batch * h_kv * length * d_k * bytes per value."""
    return 2 * layers * batch * kv_heads * length * d_k * bytes_per_value


def cpu_name():
    """The processor's name as /proc/cpuinfo gives it (Linux), else the machine type."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.machine()


def timed_round(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def megabytes(n):
    return f"{n / 2**20:,.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--dff", type=int, default=2048)
    parser.add_argument("--vocab", type=int, default=1024)
    parser.add_argument("--context", type=int, default=1024, help="max_length, the longest sequence")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--prompt", type=int, default=1,
                        help="prompt length (1: no prefill); the cache holds prompt - 1 + new tokens positions")
    parser.add_argument("--kv-heads", type=int, nargs="+", default=None, help="default: h, h/2, h/4, 1")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--llama", action="store_true", help="the other switches of mt.LLAMA_STYLE")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: 2 layers, d_model 64, context 64, batch 2, 8 new tokens, 1 repeat")
    args = parser.parse_args()
    if args.quick:
        args.layers, args.d_model, args.dff, args.vocab = 2, 64, 128, 64
        args.context, args.batch, args.new_tokens, args.repeats = 64, 2, 8, 1
    h = args.heads
    kv_heads = args.kv_heads or sorted({h, max(h // 2, 1), max(h // 4, 1), 1}, reverse=True)
    if kv_heads[0] != h:
        parser.error(f"--kv-heads must start with h = {h} (multi-head attention, the ratios' baseline)")
    prompt_length = args.prompt
    length = prompt_length + args.new_tokens - 1  # the cache greedy_generate allocates: P - 1 + N slots
    if args.new_tokens < 2 or not 1 <= prompt_length or length > args.context:
        parser.error(f"need new tokens >= 2 and 1 <= prompt, prompt + new tokens - 1 <= context {args.context}")

    shape = dict(num_layers=args.layers, d_model=args.d_model, num_heads=h, dff=args.dff,
                 vocab_size=args.vocab, max_length=args.context, dropout=0.0)
    style = dict(mt.LLAMA_STYLE) if args.llama else {}
    d_k = args.d_model // h
    print(f"{time.strftime('%Y-%m-%d')}; {cpu_name()}, {len(os.sched_getaffinity(0))} cores, "
          f"{len(tf.config.list_physical_devices('GPU'))} GPU, load average {os.getloadavg()[0]:.1f}; "
          f"Python {platform.python_version()}, TensorFlow {tf.__version__}, Keras {keras.__version__}, "
          f"NumPy {np.__version__}")
    print(f"MinGPT {shape}, d_k {d_k}, {'mt.LLAMA_STYLE' if args.llama else 'default switches'}; "
          f"batch {args.batch}, prompt {prompt_length}, {args.new_tokens} new tokens: a cache of {length} positions")

    # 1. Memory: what start_cache allocates, against the formula, float32 and float16.
    models, counts = {}, {}
    rows = []
    for g in kv_heads:
        config = dict(shape, **style, num_key_value_heads=g)
        measured = {}
        for dtype, size in (("float32", 4), ("mixed_float16", 2)):
            model = mt.MinGPT(**config, dtype=dtype)
            with mt.quiet_stderr():  # oneDNN logs a line for float16 on a CPU without AVX-512
                kv, flags = cache_bytes(model.start_cache(args.batch, length))
            expected = formula_bytes(args.layers, args.batch, g, length, d_k, size)
            assert kv == expected, (g, dtype, kv, expected)
            measured[dtype] = kv
        keras.utils.set_random_seed(0)
        model = mt.MinGPT(**config)
        model(np.zeros((1, 1), dtype="int32"), training=False)  # builds the weights
        counts[g] = mt.parameter_count(**config)
        assert counts[g] == model.count_params(), (g, counts[g], model.count_params())
        models[g] = model
        rows.append((g, measured["float32"], measured["mixed_float16"], flags))
    base = rows[0][1]
    # Weights a step need not read: the position table but one row; an input embedding of its own
    # (not tied to the output projection) but the batch's rows. Counted as not read at all.
    unread = (args.context - 1) * args.d_model if style.get("positions", "learned") == "learned" else 0
    unread += 0 if style.get("share_embeddings", True) else args.vocab * args.d_model
    print("\n1. key/value cache: bytes of the keys and values start_cache allocates (MiB), "
          "each asserted equal to 2 * layers * batch * h_kv * length * d_k * bytes")
    print(f"{'attention':<10} {'h_kv':>4} {'float32':>9} {'float16':>9} {'/ MHA':>6} {'weights':>11} {'/ MHA':>6} "
          f"{'read/step':>10} {'cache share':>11}")
    for g, f32, f16, flags in rows:
        kind = "MHA" if g == h else "MQA" if g == 1 else "GQA"
        read = (counts[g] - unread) * 4 + f32  # float32 weights read once, and the whole cache
        print(f"{kind:<10} {g:>4} {megabytes(f32):>9} {megabytes(f16):>9} {f32 / base:>6.3f} {counts[g]:>11,} "
              f"{counts[g] / counts[h]:>6.3f} {megabytes(read):>10} {f32 / read:>11.0%}")
    print(f"(plus the is_token flags: {rows[0][3] / 2**10:,.1f} KiB for every h_kv; read/step: MiB a float32 "
          "decoding step reads at least: the weights, but those of the positions and input tokens, and the cache)")

    # 2. Speed: greedy_generate from the same prompts, N new tokens, every model in turn in each round.
    prompts = np.random.RandomState(0).randint(0, args.vocab, size=(args.batch, prompt_length)).astype("int32")
    runs = {g: (lambda m=models[g]: mt.greedy_generate(m, prompts, args.new_tokens)) for g in kv_heads}
    start = time.perf_counter()
    for run in runs.values():
        run()  # warm-up: traces and compiles each loop (XLA) for this shape
    compile_seconds = time.perf_counter() - start
    times = {g: [] for g in kv_heads}
    for _ in range(args.repeats):
        for g, run in runs.items():
            times[g].append(timed_round(run))
    print(f"\n2. cached greedy decoding (mt.greedy_generate, compiled by XLA): {args.batch} x {args.new_tokens} new "
          f"tokens, median of {args.repeats} rounds after a warm-up round "
          f"({compile_seconds:.0f} s, compilation included)")
    print(f"{'attention':<10} {'h_kv':>4} {'seconds':>8} {'spread':>15} {'tokens/s':>9} {'/ MHA':>6} {'ms/step':>8}")
    base_rate = None
    for g in kv_heads:
        seconds = statistics.median(times[g])
        rate = args.batch * args.new_tokens / seconds
        base_rate = base_rate or rate
        kind = "MHA" if g == h else "MQA" if g == 1 else "GQA"
        spread = f"{min(times[g]):.3f}-{max(times[g]):.3f}"
        print(f"{kind:<10} {g:>4} {seconds:>8.3f} {spread:>15} {rate:>9,.0f} {rate / base_rate:>6.2f} "
              f"{1000 * seconds / args.new_tokens:>8.2f}")
    print(f"(tokens/s = batch * new tokens / seconds; spread: fastest and slowest round; ms/step: seconds / new tokens"
          f"{'' if prompt_length == 1 else ', the prefill of the prompt included'})")
    print(f"(load average at the end: {os.getloadavg()[0]:.1f})\n")
    print(CAVEATS)


if __name__ == "__main__":
    main()
