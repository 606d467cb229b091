"""Training pieces: the paper's learning-rate schedule (section 5.3), loss and accuracy."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="mintransformer")
class TransformerSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """lrate = d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)  (paper equation 3).

    Linear warm-up for ``warmup_steps`` steps, then decay with 1/sqrt(step). The peak,
    at ``step = warmup_steps``, is (d_model * warmup_steps)^-0.5. Keras calls the schedule with
    the number of updates already made (0 for the first), the paper numbers updates from 1;
    step 0 is treated as step 1, so the first update neither divides by zero nor gets a rate
    of 0. The first two updates therefore both get the rate of the paper's step 1, and every
    later update k that of the paper's step k - 1: a shift of one step (1/4000 of the paper's
    warm-up), kept so that the shipped models and chapter 11's recorded runs stay reproducible.

    Optionally (not in the paper) the rate is multiplied by a linear cool-down over the
    last ``cooldown_steps`` of ``total_steps`` updates: min(1, (total_steps - step) /
    cooldown_steps), falling from 1 to 1/cooldown_steps at the last update. A short run
    ends long before the paper's 1/sqrt(step) decay has brought the rate down (chapter 8);
    the cool-down lets it settle. Before the cool-down the rate is equation 3, bit for bit.

    With ``warmup=False`` (chapter 11's ablation) the first ``warmup_steps`` updates take the
    peak rate straight away, and the decay after them is unchanged:
    lrate = d_model^-0.5 * max(step, warmup_steps)^-0.5.

    Args:
        d_model: model width.
        warmup_steps: length of the warm-up.
        total_steps: number of updates of the whole run (needed with ``cooldown_steps``).
        cooldown_steps: length of the linear cool-down; 0 (the default) for none.
        warmup: False holds the peak rate over the first ``warmup_steps`` instead of rising to it.
    """

    def __init__(self, d_model, warmup_steps=4000, total_steps=None, cooldown_steps=0, warmup=True):
        if cooldown_steps and not (total_steps and 0 < cooldown_steps <= total_steps):
            raise ValueError(f"cooldown_steps={cooldown_steps} needs total_steps >= cooldown_steps, "
                             f"got total_steps={total_steps}")
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.cooldown_steps = cooldown_steps
        self.warmup = warmup

    def __call__(self, step):
        keras_step = ops.cast(step, "float32")
        step = ops.maximum(keras_step, 1.0)
        warmup = ops.cast(self.warmup_steps, "float32")
        if self.warmup:
            shape = ops.minimum(ops.rsqrt(step), step * warmup**-1.5)
        else:
            shape = ops.rsqrt(ops.maximum(step, warmup))
        rate = ops.rsqrt(ops.cast(self.d_model, "float32")) * shape
        if self.cooldown_steps:
            remaining = (self.total_steps - keras_step) / self.cooldown_steps  # >= 1 before the cool-down
            rate = rate * ops.clip(remaining, 0.0, 1.0)
        return rate

    def get_config(self):
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps,
                "total_steps": self.total_steps, "cooldown_steps": self.cooldown_steps, "warmup": self.warmup}


@keras.saving.register_keras_serializable(package="mintransformer")
def masked_loss(y_true, y_pred, label_smoothing=0.0, pad_id=0):
    """Cross-entropy from logits, averaged over the non-pad target tokens only.

    Label smoothing is Keras's: the one-hot target becomes
    (1 - eps) * one_hot + eps / V (paper section 5.4 uses eps = 0.1). The loss against that
    target splits into two terms that need no one-hot tensor:

        (1 - eps) * (-log p[target])  +  eps * mean over the V ids of (-log p[v])

    so the only (B, T, V) tensor is the log-softmax itself (a dense one-hot would add
    B * T * V floats: about 3.7 GB in float32 at the paper's 25k tokens and 37k vocabulary).

    Args:
        y_true: target ids (B, T).
        y_pred: logits (B, T, V).

    Returns:
        A scalar: sum of per-token losses over non-pad tokens / number of non-pad tokens. Under a
        ``tf.distribute`` strategy, the tokens are counted over the replicas' whole batch
        (``tokens_in_global_batch``), so that the summed gradients are the single-device ones.
    """
    log_p = ops.log_softmax(ops.cast(y_pred, "float32"), axis=-1)  # (B, T, V)
    ids = ops.cast(y_true, "int32")
    nll = -ops.take_along_axis(log_p, ids[..., None], axis=-1)[..., 0]  # (B, T)
    # A label outside 0..V-1 raises in eager mode; compiled by XLA the lookup would clamp it to
    # a real id without an error, so such a token's loss is NaN instead of a plausible number.
    in_vocabulary = ops.logical_and(ops.greater_equal(ids, 0), ops.less(ids, ops.shape(log_p)[-1]))
    nll = ops.where(in_vocabulary, nll, float("nan"))
    per_token = nll
    if label_smoothing:
        uniform = -ops.mean(log_p, axis=-1)  # (B, T): cross-entropy against 1/V everywhere
        per_token = (1.0 - label_smoothing) * nll + label_smoothing * uniform
    keep = ops.cast(ops.not_equal(ids, pad_id), "float32")  # (B, T)
    return ops.sum(per_token * keep) / ops.maximum(tokens_in_global_batch(keep), 1.0)


def tokens_in_global_batch(keep):
    """The number of non-pad tokens in the whole batch, on every replica of a ``tf.distribute`` run.

    Under a strategy with R > 1 replicas (appendix A), each replica computes the loss of its own
    slice of the batch and the replicas' gradients are summed. Dividing each slice's sum by the
    tokens of *all* slices makes that sum the gradient of the whole batch's mean, the
    single-device gradient; dividing by the slice's own tokens would give a sum of R means.
    (Keras uses a scalar loss as it is only when the model's output carries no Keras mask and
    ``fit`` gets no sample weights, as here; otherwise it divides it by R.) Outside a strategy, or
    with one replica, it is ``ops.sum(keep)``.

    Args:
        keep: (B, T) float32, 1 for a real token and 0 for padding.
    """
    count = ops.sum(keep)
    if keras.backend.backend() != "tensorflow":
        return count
    import tensorflow as tf

    replica = tf.distribute.get_replica_context()  # None in a strategy's cross-replica context
    if replica is None or replica.num_replicas_in_sync == 1:
        return count
    return replica.all_reduce(tf.distribute.ReduceOp.SUM, count)


@keras.saving.register_keras_serializable(package="mintransformer")
def masked_accuracy(y_true, y_pred, pad_id=0):
    """Fraction of non-pad target tokens whose arg-max prediction is right, in one batch.

    Passed to ``compile`` as a plain function, Keras would average these per-batch fractions,
    so a batch with few real tokens would weigh as much as a full one; ``MaskedAccuracy``
    counts tokens across batches instead.

    Args:
        y_true: target ids (B, T).
        y_pred: logits or probabilities (B, T, V).
    """
    hits, keep = _hits(y_true, y_pred, pad_id)
    return ops.sum(hits) / ops.maximum(ops.sum(keep), 1.0)


def _hits(y_true, y_pred, pad_id):
    """Float32 (B, T) right-and-not-pad indicators, and (B, T) not-pad indicators."""
    predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")  # (B, T)
    y_true = ops.cast(y_true, "int32")
    keep = ops.not_equal(y_true, pad_id)
    hits = ops.logical_and(ops.equal(predicted, y_true), keep)
    return ops.cast(hits, "float32"), ops.cast(keep, "float32")


def _refuse_sample_weight(sample_weight, what):
    """The padding mask is these tokens' only weighting: sample weights would be ignored or mis-scaled."""
    if sample_weight is not None:
        raise ValueError(
            f"{what} weighs tokens by the padding mask (pad_id) and takes no sample_weight: a weight per "
            "sequence would be ignored or would rescale the token mean wrongly. Drop the weights, or give "
            "the tokens to leave out the pad id."
        )


@keras.saving.register_keras_serializable(package="mintransformer")
class MaskedAccuracy(keras.metrics.Metric):
    """Token accuracy over non-pad tokens, counted across batches (for ``compile``).

    It keeps two running totals, right tokens and real tokens, so the result over an epoch
    or an ``evaluate`` is the fraction of all real tokens that are right, whatever the
    batches' sizes and padding. Its name is ``masked_accuracy``, as in the logs.

    Args:
        pad_id: the padding token id.
    """

    def __init__(self, pad_id=0, name="masked_accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = pad_id
        self.right = self.add_variable(shape=(), initializer="zeros", name="right")
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")

    def update_state(self, y_true, y_pred, sample_weight=None):
        _refuse_sample_weight(sample_weight, "MaskedAccuracy")
        hits, keep = _hits(y_true, y_pred, self.pad_id)
        self.right.assign_add(ops.sum(hits))
        self.total.assign_add(ops.sum(keep))

    def result(self):
        return self.right / ops.maximum(self.total, 1.0)

    def get_config(self):
        return {"pad_id": self.pad_id, "name": self.name}


@keras.saving.register_keras_serializable(package="mintransformer")
class MaskedLoss(keras.losses.Loss):
    """``masked_loss`` with its options bound, for ``model.compile(loss=MaskedLoss(0.1))``.

    Args:
        label_smoothing: epsilon_ls (the paper uses 0.1).
        pad_id: the padding token id.
    """

    def __init__(self, label_smoothing=0.0, pad_id=0, name="masked_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        self.label_smoothing = label_smoothing
        self.pad_id = pad_id

    def __call__(self, y_true, y_pred, sample_weight=None):
        _refuse_sample_weight(sample_weight, "MaskedLoss")
        return super().__call__(y_true, y_pred)

    def call(self, y_true, y_pred):
        return masked_loss(y_true, y_pred, self.label_smoothing, self.pad_id)

    def get_config(self):
        return {"label_smoothing": self.label_smoothing, "pad_id": self.pad_id, "name": self.name}


class StepLossHistory(keras.callbacks.Callback):
    """Record the training loss of every optimizer step, for per-step (not per-epoch) curves.

    Keras 3 passes ``on_train_batch_end`` the *running mean* of the loss since the epoch
    began, weighted by batch size. The loss of batch k is recovered from two means:
    n_k * mean_k - n_{k-1} * mean_{k-1}, with n_k the examples seen so far this epoch.
    Every batch is taken to hold ``batch_size`` examples: exact when the training set is a
    multiple of the batch size (as in chapter 8's tasks), approximate for a smaller last batch.

    Attributes:
        losses: list of floats, one per step of every ``fit`` this callback was passed to.
    """

    def __init__(self, batch_size):
        super().__init__()
        self.batch_size = batch_size
        self.losses = []

    def on_epoch_begin(self, epoch, logs=None):
        self._seen, self._mean = 0, 0.0

    def on_train_batch_end(self, batch, logs=None):
        seen, mean = self._seen + self.batch_size, float(logs["loss"])
        self.losses.append((seen * mean - self._seen * self._mean) / self.batch_size)
        self._seen, self._mean = seen, mean
