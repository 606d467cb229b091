"""Appendix A: one model on several devices with ``tf.distribute``, and what training costs.

- ``split_cpu``: the CPU as several logical devices, so that a ``MirroredStrategy`` runs on any
  machine (``MINTRANSFORMER_CPU_DEVICES=2`` before ``import mintransformer`` calls it);
- ``logical_cpus``: the logical CPUs' names, or an error that says how to get them;
- ``gradients``: one batch's gradient on one device, as NumPy arrays;
- ``replica_gradients``: one step of data parallelism opened up, the replicas' slices of a batch,
  their gradients and the all-reduce that sums them; ``replicas_agree``: the replicas' copies of
  the weights are identical;
- ``replica_losses``: each replica's loss as ``model.fit`` uses it, beside the loss function's own
  value (Keras divides a scalar loss by the replicas when a Keras mask or sample weights are present);
- ``keras_accumulated_gradient``: the gradient that Keras's ``gradient_accumulation_steps`` applies;
- ``forward_flops`` and ``training_flops``: the floating-point operations of a training step,
  counted from the model's shape;
- ``seconds_per_step``: a training step timed on this machine;
- ``precision_rates``: training throughput in float32 and ``mixed_float16``, with and without XLA
  (``benchmarks/mixed_precision.py``).

This module imports only TensorFlow, Keras and NumPy at the top: the package's ``__init__`` calls
``split_cpu`` before TensorFlow's runtime starts, and the runtime fixes its devices when it does.
"""

import os
import time

import keras
import numpy as np
import tensorflow as tf

CPU_DEVICES_VARIABLE = "MINTRANSFORMER_CPU_DEVICES"

# The paper's base model (Table 3) with its shared vocabulary of about 37,000 tokens (section 5.1), as
# ``MinTransformer`` arguments: the model whose cost appendix A estimates and the benchmark times.
PAPER_BASE = dict(num_layers=6, d_model=512, num_heads=8, dff=2048, input_vocab_size=37_000,
                  target_vocab_size=37_000, dropout=0.1, share_embeddings=True)

# Forward and backward: the backward pass of a matrix product costs two products of the same size
# (the gradient with respect to each input), so a training step costs about 3 forward passes.
TRAINING_FLOPS_PER_FORWARD = 3


def split_cpu(count):
    """Split the machine's CPU into ``count`` logical devices, ``/cpu:0`` to ``/cpu:{count-1}``.

    Each logical device is a device that ``tf.distribute`` can place a replica on; they share the
    same cores, so this tests what a strategy computes, not how fast. TensorFlow fixes its devices
    when its runtime starts, at the first tensor: call this before anything else in the process
    (``import mintransformer`` starts the runtime; set ``MINTRANSFORMER_CPU_DEVICES`` before it).

    Returns:
        The names of the logical CPU devices.
    """
    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * count)
    except RuntimeError as error:
        raise RuntimeError(
            f"TensorFlow has started already and cannot split the CPU into {count} devices now. Set "
            f"os.environ[{CPU_DEVICES_VARIABLE!r}] = '{count}' before `import mintransformer`, in a fresh "
            "process (in a notebook: restart the kernel, or in Colab, Runtime > Restart session)."
        ) from error
    return [device.name for device in tf.config.list_logical_devices("CPU")]


def logical_cpus(count):
    """The names of the first ``count`` logical CPU devices; a clear error if there are fewer.

    There are fewer when the package was imported before ``MINTRANSFORMER_CPU_DEVICES`` was set (a
    second import does nothing). An import with the variable set after TensorFlow had started (a
    tensor made first) does not get this far: the import itself raises ``split_cpu``'s error.
    """
    devices = [device.name for device in tf.config.list_logical_devices("CPU")]
    if len(devices) < count:
        raise RuntimeError(
            f"{len(devices)} logical CPU device(s), not {count}: TensorFlow started before the CPU was split. "
            f"Restart the kernel (in Colab, Runtime > Restart session), then set "
            f"os.environ[{CPU_DEVICES_VARIABLE!r}] = '{count}' before `import mintransformer`.")
    return devices[:count]


def replicas_agree(strategy, variables):
    """True if every replica holds exactly the same copy of each of ``variables`` (Keras variables
    made in ``strategy``'s scope): what the all-reduce and the identical updates should guarantee."""
    for variable in variables:
        copies = [np.asarray(copy) for copy in strategy.experimental_local_results(variable.value)]
        if not all(np.array_equal(copies[0], copy) for copy in copies[1:]):
            return False
    return True


def _split_cpu_from_environment():
    """Called by the package's ``__init__`` before the runtime starts."""
    count = os.environ.get(CPU_DEVICES_VARIABLE)
    if count:
        split_cpu(int(count))


def gradients(model, loss_fn, inputs, labels):
    """The gradient of ``loss_fn(labels, model(inputs))`` on one device, as NumPy arrays in the
    order of ``model.trainable_weights`` (an embedding's sparse gradient made dense)."""
    with tf.GradientTape() as tape:
        loss = loss_fn(labels, model(inputs, training=True))
    return [np.asarray(tf.convert_to_tensor(g)) for g in tape.gradient(loss, model.trainable_weights)]


def replica_gradients(strategy, model, loss_fn, inputs, labels):
    """One training step's gradients under ``strategy``, without the update: data parallelism opened up.

    The batch is split along its first axis as ``model.fit`` splits it (one slice per replica);
    each replica runs the model on its slice, takes the gradient of ``loss_fn`` on it, and an
    all-reduce sums the replicas' gradients. ``loss_fn(labels, logits)`` is called inside each
    replica, where ``mt.masked_loss`` divides by the tokens of the whole batch.

    Returns:
        ``(rows, tokens, gradients)``: the rows and the non-pad target tokens of each replica's
        slice, and the summed gradients as NumPy arrays, in the order of
        ``model.trainable_weights``.
    """
    slices = _replica_slices(strategy, inputs, labels)

    def step(inputs, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(inputs, training=True))
        gradients = [tf.convert_to_tensor(g) for g in tape.gradient(loss, model.trainable_weights)]
        summed = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, gradients)
        return tf.shape(labels)[0], tf.math.count_nonzero(labels), summed

    rows, tokens, summed = tf.function(lambda *slices: strategy.run(step, args=slices))(*slices)
    local = strategy.experimental_local_results  # one value per replica (one alone without a strategy)
    return [int(r) for r in local(rows)], [int(t) for t in local(tokens)], [np.asarray(g) for g in local(summed)[0]]


def _replica_slices(strategy, *arrays):
    """One global batch of ``arrays`` (cut along the first axis), as ``strategy`` hands it to its replicas."""
    batch = tf.data.Dataset.from_tensor_slices(arrays).batch(len(arrays[-1]))
    return next(iter(strategy.experimental_distribute_dataset(batch)))


def replica_losses(strategy, model, inputs, labels, sample_weight=None):
    """Each replica's loss as ``model.fit`` uses it, and as the compiled loss itself returns it.

    ``model`` is built and compiled in ``strategy``'s scope. ``model.fit`` takes the gradient of
    ``model.compute_loss``, which passes the compiled loss's value through Keras's reduction
    (``keras/src/losses/loss.py``): a scalar is used as it is, unless the prediction carries a
    Keras mask (from an ``Embedding(mask_zero=True)``, say) or sample weights are given; then
    ``apply_mask`` and ``reduce_values`` spread the scalar over the mask's or the weights' entries,
    average it, and ``scale_loss_for_distribution`` divides it by the number of replicas.

    Returns:
        ``(fit, own)``: one float per replica each: ``model.compute_loss`` on the replica's slice,
        and the compiled loss's own value there (its ``call`` for a ``keras.losses.Loss``).
    """
    loss = model.loss
    if loss is None:
        raise ValueError("replica_losses needs a model compiled with a loss: model.compile(loss=...) in the "
                         "strategy's scope first.")
    own_loss = loss.call if isinstance(loss, keras.losses.Loss) else loss
    arrays = (inputs, labels) if sample_weight is None else (inputs, labels, sample_weight)

    def step(inputs, labels, sample_weight=None):
        logits = model(inputs, training=False)
        return model.compute_loss(inputs, labels, logits, sample_weight, training=False), own_loss(labels, logits)

    fit, own = tf.function(lambda *slices: strategy.run(step, args=slices))(*_replica_slices(strategy, *arrays))
    local = strategy.experimental_local_results
    return [float(value) for value in local(fit)], [float(value) for value in local(own)]


def keras_accumulated_gradient(model, micro_batches, loss_fn):
    """The gradient that one update of Keras's ``gradient_accumulation_steps`` option applies.

    A copy of ``model`` with the same weights is compiled with ``loss_fn`` and
    ``keras.optimizers.SGD(learning_rate=1.0, gradient_accumulation_steps=len(micro_batches))``,
    and trained on each of ``micro_batches`` (a list of ``(inputs, labels)``) in turn: one update.
    Plain SGD at rate 1 moves each weight by minus the gradient it applies, so the change of the
    weights is that gradient. Keras's optimizer applies ``(g + acc_g) / steps``, the mean of the
    micro-batches' gradients (``keras/src/optimizers/base_optimizer.py``, ``apply``). ``model``
    should have no dropout (or the copy draws other masks); it is not changed.

    Returns:
        The applied gradient as NumPy arrays, in the order of ``model.trainable_weights``.
    """
    if len(micro_batches) < 2:
        raise ValueError(f"keras_accumulated_gradient needs at least 2 micro-batches (Keras's "
                         f"gradient_accumulation_steps must be >= 2), got {len(micro_batches)}.")
    copy = model.__class__.from_config(model.get_config())
    copy(micro_batches[0][0])
    copy.set_weights(model.get_weights())
    copy.compile(optimizer=keras.optimizers.SGD(learning_rate=1.0, gradient_accumulation_steps=len(micro_batches)),
                 loss=loss_fn)
    before = [np.array(weight.numpy()) for weight in copy.trainable_weights]
    for inputs, labels in micro_batches:
        copy.train_on_batch(inputs, labels)
    if int(copy.optimizer.iterations) != 1:
        raise RuntimeError(f"expected one update of the weights, got {int(copy.optimizer.iterations)}")
    return [b - weight.numpy() for b, weight in zip(before, copy.trainable_weights)]


def forward_flops(num_layers, d_model, dff, vocab_size, source_tokens, target_tokens, source_length,
                  target_length):
    """Floating-point operations of one forward pass of a ``MinTransformer``, by part.

    A product of an (m, k) and a (k, n) matrix costs 2 m k n operations (a multiply and an add).
    Per layer and token: the projections 2 d^2 each (four in self-attention); the attention scores
    and the weighted sum 2 L d each, for L keys; the feed-forward network 4 d dff. Cross-attention
    projects the target into queries and its output (4 d^2 per target token) and the encoder's
    output into keys and values (4 d^2 per source token and layer). The output layer costs 2 d V
    per target token. Embedding look-ups, softmax, layer norms, residuals and the loss are not
    products and are left out (a few percent at the paper's sizes).

    Args:
        num_layers: N, in the encoder and in the decoder.
        d_model, dff, vocab_size: the model's sizes (V of the output layer).
        source_tokens, target_tokens: tokens in the batch (padding included: it is computed).
        source_length, target_length: the length of each sequence, S and T (keys per query).

    Returns:
        ``{"encoder": ..., "decoder": ..., "output": ...}``, in operations.
    """
    d, n = d_model, num_layers
    per_source = n * (4 * 2 * d * d + 2 * 2 * source_length * d + 4 * d * dff)
    per_target = n * (4 * 2 * d * d + 2 * 2 * target_length * d  # masked self-attention
                      + 2 * 2 * d * d + 2 * 2 * source_length * d  # cross-attention: queries, output, scores
                      + 4 * d * dff)
    cross_keys_values = n * 2 * 2 * d * d  # per source token, in every decoder layer
    return {"encoder": source_tokens * per_source,
            "decoder": target_tokens * per_target + source_tokens * cross_keys_values,
            "output": target_tokens * 2 * d * vocab_size}


def count_products(model, inputs):
    """Operations in the matrix products of one forward pass of ``model`` on ``inputs``, counted
    from the graph TensorFlow traces: 2 m k n for each (m, k) x (k, n) product, batched or not.

    An independent check of ``forward_flops``: it reads the shapes of the ``MatMul`` and
    ``BatchMatMulV2`` operations the model really runs, not the formula.
    """
    specs = tf.nest.map_structure(lambda x: tf.TensorSpec(x.shape, x.dtype), inputs)
    graph = tf.function(lambda x: model(x, training=False)).get_concrete_function(specs).graph
    total = 0
    for op in graph.get_operations():
        if op.type == "MatMul":
            (m, k), (_, n) = (i.shape.as_list()[::-1] if op.get_attr(f"transpose_{side}") else i.shape.as_list()
                              for i, side in zip(op.inputs, "ab"))
            total += 2 * m * k * n
        elif op.type in ("BatchMatMulV2", "BatchMatMulV3"):
            a = op.inputs[0].shape.as_list()
            k = a[-2] if op.get_attr("adj_x") else a[-1]
            total += 2 * int(np.prod(op.outputs[0].shape.as_list())) * k
    return total


def training_flops(*args, **kwargs):
    """Operations of one training step: ``TRAINING_FLOPS_PER_FORWARD`` forward passes
    (``forward_flops``'s arguments)."""
    return TRAINING_FLOPS_PER_FORWARD * sum(forward_flops(*args, **kwargs).values())


def seconds_per_step(model, inputs, labels, steps=3):
    """Seconds per training step of a compiled ``model`` on one batch: the fastest of ``steps``,
    after a first step that traces and compiles the step (not timed)."""
    model.train_on_batch(inputs, labels)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        model.train_on_batch(inputs, labels)  # returns the loss as a number: the step has finished
        times.append(time.perf_counter() - start)
    return min(times)


def precision_rates(build, inputs, labels, steps=5):
    """Target tokens per second of a training step in four settings, built by ``build()``.

    ``build()`` must return a compiled-ready model: this sets the dtype policy around it (float32
    or ``mixed_float16``, Keras then scales the loss so that float16 gradients do not underflow)
    and compiles it with ``jit_compile`` False or True (XLA), with the paper's optimizer.

    Returns:
        ``{(policy, jit_compile): tokens per second}`` for the four settings.
    """
    from .recipes import compile_model

    tokens = int(np.count_nonzero(labels))
    rates = {}
    for policy in ("float32", "mixed_float16"):
        for jit in (False, True):
            previous = keras.config.dtype_policy()
            keras.config.set_dtype_policy(policy)
            try:
                model = build()
            finally:
                keras.config.set_dtype_policy(previous)
            compile_model(model, warmup_steps=4000)
            model.jit_compile = jit
            rates[policy, jit] = tokens / seconds_per_step(model, inputs, labels, steps)
    return rates
