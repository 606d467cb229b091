"""Run by tests/test_distribute.py in a fresh process: TensorFlow must split the CPU before it starts.

    MINTRANSFORMER_CPU_DEVICES=2 python tests/mirrored_run.py OUT_DIR STEPS

Trains appendix A's recipe for STEPS steps on one device and under a MirroredStrategy over two
logical CPUs, takes one step's gradients both ways, compares the loss that ``model.fit`` uses on
each replica with the loss's own value, and writes what it found to OUT_DIR.
"""

import json
import pathlib
import sys

import mintransformer as mt  # first: splits the CPU (MINTRANSFORMER_CPU_DEVICES) and starts TensorFlow
import keras
import numpy as np
import tensorflow as tf
from mintransformer.recipes import distributed

out, steps = pathlib.Path(sys.argv[1]), int(sys.argv[2])
devices = mt.distribute.logical_cpus(2)
mirrored = tf.distribute.MirroredStrategy(devices)
batches = distributed.dataset(steps)
one, one_losses = distributed.train(tf.distribute.get_strategy(), batches)
two, two_losses = distributed.train(mirrored, batches, checkpoint=str(out / "mirrored.weights.h5"))
np.savez(out / "weights.npz", *[w.numpy() for w in two.weights])
np.savez(out / "optimizer.npz", *[v.numpy() for v in two.optimizer.variables])
agree = mt.distribute.replicas_agree(mirrored, two.weights + two.optimizer.variables)


def per_replica_mean(labels, logits):
    """The loss averaged over each replica's own tokens (the mistake ``mt.masked_loss`` avoids)."""
    keep = tf.cast(labels != 0, "float32")
    nll = -tf.gather(tf.nn.log_softmax(logits), tf.cast(labels, "int32"), batch_dims=2)
    return tf.reduce_sum(nll * keep) / tf.reduce_sum(keep)


inputs, labels = next(iter(batches))
with tf.GradientTape() as tape:
    loss = mt.masked_loss(labels, one(inputs, training=True))
single = np.concatenate([np.ravel(tf.convert_to_tensor(g)) for g in tape.gradient(loss, one.trainable_weights)])
errors, tokens = {}, None
copy = distributed.build(mirrored)
copy(inputs)
copy.set_weights(one.get_weights())
for name, loss_fn in [("masked_loss", mt.masked_loss), ("per_replica_mean", per_replica_mean)]:
    rows, tokens, gradients = mt.distribute.replica_gradients(mirrored, copy, loss_fn, inputs, labels)
    summed = np.concatenate([np.ravel(g) for g in gradients])
    errors[name] = float(np.linalg.norm(summed - single) / np.linalg.norm(single))

# What model.fit makes of the loss on each replica (Keras's reduction), beside the loss's own value.
fit, own = mt.distribute.replica_losses(mirrored, copy, inputs, labels)
vocab = int(np.max(labels)) + 1
toy = {}
for mask_zero in (False, True):  # mask_zero=True: an output that carries a Keras mask, the input's padding
    keras.utils.set_random_seed(0)
    with mirrored.scope():
        toy[mask_zero] = keras.Sequential([keras.Input((None,), dtype="int32"),
                                           keras.layers.Embedding(vocab, 8, mask_zero=mask_zero),
                                           keras.layers.Dense(vocab)])
        toy[mask_zero].compile(optimizer="adam", loss=mt.masked_loss)  # the function: Keras takes sample weights
ones = np.ones(len(labels), "float32")
weighted, weighted_own = mt.distribute.replica_losses(mirrored, toy[False], labels, labels, sample_weight=ones)
masked_fit, masked_own = mt.distribute.replica_losses(mirrored, toy[True], labels, labels)
fit_over_own = {"reversal": list(np.divide(fit, own)), "sample_weight": list(np.divide(weighted, weighted_own)),
                "keras_mask": list(np.divide(masked_fit, masked_own))}

flat = [np.concatenate([np.ravel(w.numpy()) for w in m.weights]) for m in (one, two)]
untrained = distributed.build(tf.distribute.get_strategy())
untrained(inputs)
start = np.concatenate([np.ravel(w.numpy()) for w in untrained.weights])
(out / "result.json").write_text(json.dumps(dict(
    devices=devices, replicas=mirrored.num_replicas_in_sync, replicas_agree=agree, rows=rows, tokens=tokens,
    errors=errors, fit_over_own={k: [float(v) for v in values] for k, values in fit_over_own.items()},
    max_weight_difference=float(np.max(np.abs(flat[0] - flat[1]))),
    relative_weight_difference=float(np.linalg.norm(flat[0] - flat[1]) / np.linalg.norm(flat[0] - start)),
    max_loss_difference=float(np.max(np.abs(np.subtract(one_losses, two_losses)))), steps=len(two_losses))))
