"""Training-step throughput of MinTransformer against the same model built from Keras's and KerasHub's layers.

    python benchmarks/train_throughput.py [--quick] [--steps 20] [--rounds 5]

Two references have the same shape and the same number of weights: one built from
keras.layers.MultiHeadAttention, keras.layers.LayerNormalization and keras.layers.Dense
(``KerasReference`` below), one from keras_hub.layers.TransformerEncoder and TransformerDecoder
(``KerasHubTransformer`` in keras_hub_transformer.py). KerasHub's feed-forward network has no
dropout between its two Dense layers and ours has one, so ours is also trained with that dropout
off (which leaves exactly KerasHub's dropouts), and with no dropout at all (what dropout costs).
The models are trained with model.fit on the same batch, in turn within each round, with and
without jit_compile; the script prints target tokens per second (the best of the rounds) and
the ratios.
"""

import argparse
import math
import time

import mintransformer as mt  # first: keeps TensorFlow's start-up log lines quiet
import keras  # noqa: E402
import keras_hub
import numpy as np
import tensorflow as tf
from keras import layers, ops
from keras_hub_transformer import KerasHubTransformer


class KerasReference(keras.Model):
    """Post-norm encoder-decoder Transformer from stock Keras layers (benchmark reference)."""

    def __init__(self, num_layers, d_model, num_heads, dff, vocab_size, max_length, dropout):
        super().__init__()
        self.d_model = d_model
        self.embed_src = layers.Embedding(vocab_size, d_model)
        self.embed_tgt = layers.Embedding(vocab_size, d_model)
        self.pe = mt.positional_encoding(max_length, d_model)
        self.drop = layers.Dropout(dropout)
        mha = lambda: layers.MultiHeadAttention(num_heads, d_model // num_heads, dropout=dropout)  # noqa: E731
        norm = lambda: layers.LayerNormalization(epsilon=1e-6)  # noqa: E731
        ffn = lambda: keras.Sequential([layers.Dense(dff, activation="relu"), layers.Dropout(dropout),  # noqa: E731
                                        layers.Dense(d_model)])
        self.enc = [(mha(), norm(), ffn(), norm()) for _ in range(num_layers)]
        self.dec = [(mha(), norm(), mha(), norm(), ffn(), norm()) for _ in range(num_layers)]
        self.out = layers.Dense(vocab_size)

    def embed(self, layer, tokens):
        x = layer(tokens) * math.sqrt(self.d_model)
        return x + ops.cast(self.pe, x.dtype)[: ops.shape(tokens)[1]]

    def call(self, inputs, training=False):
        src, tgt = inputs
        src_keep = ops.not_equal(src, 0)  # (B, S)
        tgt_keep = ops.not_equal(tgt, 0)  # (B, T)
        t = ops.shape(tgt)[1]
        causal = ops.greater_equal(ops.arange(t)[:, None], ops.arange(t)[None, :])  # (T, T)
        enc_mask = src_keep[:, None, :]  # (B, 1, S), broadcast over queries
        self_mask = ops.logical_and(causal[None], tgt_keep[:, None, :])  # (B, T, T)
        cross_mask = src_keep[:, None, :]  # (B, 1, S)
        x = self.drop(self.embed(self.embed_src, src), training=training)
        for attn, n1, ffn, n2 in self.enc:
            x = n1(x + self.drop(attn(x, x, attention_mask=enc_mask, training=training), training=training))
            x = n2(x + self.drop(ffn(x, training=training), training=training))
        y = self.drop(self.embed(self.embed_tgt, tgt), training=training)
        for attn, n1, cross, n2, ffn, n3 in self.dec:
            y = n1(y + self.drop(attn(y, y, attention_mask=self_mask, training=training), training=training))
            y = n2(y + self.drop(cross(y, x, attention_mask=cross_mask, training=training), training=training))
            y = n3(y + self.drop(ffn(y, training=training), training=training))
        return self.out(y)


def make_batch(batch, length, vocab, seed):
    rng = np.random.RandomState(seed)
    src = rng.randint(3, vocab, size=(batch, length)).astype("int32")
    tgt = rng.randint(3, vocab, size=(batch, length + 1)).astype("int32")
    for row in range(batch):  # ragged lengths, as in real batches
        src[row, rng.randint(length // 2, length + 1):] = 0
        tgt[row, rng.randint(length // 2, length + 2):] = 0
    return (src, tgt[:, :-1]), tgt[:, 1:]


def throughput(model, data, steps, jit):
    x, y = data
    batches = tf.data.Dataset.from_tensors(data).repeat()
    # No metrics for any model (KerasHub's Seq2SeqLM.compile would add an accuracy by default).
    model.compile(optimizer=keras.optimizers.Adam(1e-4), loss=mt.masked_loss, weighted_metrics=None,
                  jit_compile=jit)
    model.fit(batches, steps_per_epoch=3, epochs=1, shuffle=False, verbose=0)  # trace + warm up
    start = time.perf_counter()
    model.fit(batches, steps_per_epoch=steps, epochs=1, shuffle=False, verbose=0)
    seconds = time.perf_counter() - start
    return steps * int(np.sum(y != 0)) / seconds


def without_inner_dropout(model):
    """Turns off the dropout between the FFN's two Dense layers, which KerasHub's layers lack."""
    ffns = [layer.ffn for layer in model.encoder.stack + model.decoder.stack]
    for ffn in ffns:
        ffn.inner_dropout.rate = 0.0  # Keras's Dropout draws no random numbers at rate 0
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smoke test: 1 round of 3 steps")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.rounds = 3, 1
    shape = dict(num_layers=2, d_model=128, num_heads=4, dff=512)
    vocab, batch, length = 64, 64, 32
    data = make_batch(batch, length, vocab, seed=0)
    keras.utils.set_random_seed(0)
    ours = lambda **kw: mt.MinTransformer(  # noqa: E731
        **shape, input_vocab_size=vocab, target_vocab_size=vocab, max_length=64, **kw)
    models = {
        "ours": ours(),
        "ours, no FFN inner dropout": without_inner_dropout(ours()),
        "ours, no dropout at all": ours(dropout=0.0),
        "keras": KerasReference(**shape, vocab_size=vocab, max_length=64, dropout=0.1),
        "keras_hub": KerasHubTransformer(**shape, vocab_size=vocab, dropout=0.1),
    }
    for model in models.values():
        model(data[0])
    print(f"shape {shape}, vocab {vocab}, batch {batch}, length {length}; KerasHub {keras_hub.__version__}")
    print("weights: " + ", ".join(sorted({f"{model.count_params():,}" for model in models.values()})))
    rates = {(name, jit): [] for name in models for jit in (False, True)}
    for jit in (False, True):
        for _ in range(args.rounds):  # alternate, so drift in machine load hits every model
            for name, model in models.items():
                rates[name, jit].append(throughput(model, data, args.steps, jit))
    # The best round: on a shared machine other work only ever slows a round down.
    rate = {key: max(values) for key, values in rates.items()}
    print(f"{'target tokens per second':<32} {'jit_compile=False':>17} {'jit_compile=True':>17}")
    for name in models:
        print(f"{name:<32} {rate[name, False]:>17,.0f} {rate[name, True]:>17,.0f}")
    for a, b in [("ours", "keras"), ("ours", "keras_hub"), ("ours, no FFN inner dropout", "keras_hub")]:
        print(f"{a + ' / ' + b:<44} " + " ".join(f"{rate[a, jit] / rate[b, jit]:>11.2f}" for jit in (False, True)))


if __name__ == "__main__":
    main()
