"""Write chapters/08_training.ipynb from the cells below (outputs are produced by run_notebook.py)."""

import nbformat

cells = []


def md(text):
    cells.append(nbformat.v4.new_markdown_cell(text.strip("\n")))


def code(text, tags=None):
    cell = nbformat.v4.new_code_cell(text.strip("\n"))
    if tags:
        cell.metadata["tags"] = tags
    cells.append(cell)


code('# Colab install cell (rewritten by scripts/run_notebook.py)\nimport sys\n\nif "google.colab" in sys.modules:\n    pass')

md(r"""
# 8. Training

The model of [chapter 7](07_mintransformer.ipynb) computes the right shapes with random weights.
This chapter trains it. None of the five source documents does: each stops at a forward pass on
random token ids and prints the shape of the output. A shape test cannot tell a working
Transformer from a broken one; a trained model that maps held-out inputs to exactly the right
outputs can.

Training needs data, a loss, an optimizer and a loop. The paper's choices are short to state
(section 5 of {cite}`vaswani2017attention`): Adam with $\beta_2 = 0.98$, a learning rate that
warms up and then decays, dropout, and label smoothing. The work is in the details: which
positions the loss counts, what the decoder reads during training, what a checkpoint must hold so
that training can continue, and what "accuracy" means. We train two small models on tasks that
the package generates, each in a minute or two on a laptop CPU, and evaluate them the way they
will be used: by decoding.

## Learning objectives

After this chapter you can:

- describe the two generated tasks, their fixed and disjoint splits, and the character tokenizer
  with its pad, start and end ids;
- build the `tf.data` pipeline (shuffle, pad, batch, prefetch) and explain teacher forcing: the
  decoder reads the target shifted right by one position;
- write the learning-rate schedule {eq}`eq-training-lrate` and the label-smoothed target
  {eq}`eq-training-smoothing`, and compute the loss floor that label smoothing creates;
- compute a loss and an accuracy over real tokens only, and show what padding does to a loss that
  forgets the mask;
- train with `model.fit`, write a full checkpoint each epoch with a Keras callback, and resume
  training from a checkpoint at the same optimizer step;
- evaluate a sequence-to-sequence model by greedy decoding and exact match, and explain why
  teacher-forced token accuracy overstates it.
""")

code(r"""
import mintransformer as mt
import collections
import os
import tempfile

import keras
import matplotlib.pyplot as plt
import numpy as np
import tensorflow as tf
from keras import ops
from mintransformer import data, recipes

keras.utils.set_random_seed(0)
tf.config.experimental.enable_op_determinism()  # the same numbers on every run, at some cost in speed
np.set_printoptions(precision=4, suppress=True)
""")

md(r"""
## Two tasks generated in code

Translating English to German, as the paper does, takes a GPU and days. We want tasks that a
CPU learns in a minute or two, whose answers are unambiguous, and that still need what makes the
Transformer work: attention that finds the right source position, and a decoder that writes one
token at a time. The package `mintransformer.data` generates two, with no download:

- **sequence reversal**: `hello` → `olleh`, lowercase strings of 3 to 12 letters. The model must
  learn to read the source backwards, a pure test of position-based attention;
- **date normalization**: `Tuesday, 3 March 1998`, `03/03/98`, `march 3rd, 98` → `1998-03-03`.
  The model must parse a dozen ways people write dates into one ISO format: find the year, the
  month (a name, an abbreviation or a number) and the day, and reorder them.

Both use one **character-level tokenizer**: every character is a token, and ids 0, 1 and 2 are
reserved for `<pad>`, `<start>` and `<end>`.
""")

code(r"""
tokenizer = data.CharTokenizer(data.REVERSAL_ALPHABET)
print("vocabulary size:", tokenizer.vocab_size, "=", len(data.SPECIALS), "specials +", len(tokenizer.alphabet), "letters")
print("ids 0-5:", {i: tokenizer.id_to_token[i] for i in range(6)})
ids = tokenizer.encode("hello", add_start=True, add_end=True)
print("encode('hello', add_start=True, add_end=True) =", ids)
print("as tokens:", tokenizer.tokens(ids))
print("decode:", repr(tokenizer.decode(ids + [0, 0])), "(stops at <end>, skips <start> and <pad>)")
assert tokenizer.decode(ids) == "hello" and (tokenizer.pad_id, tokenizer.start_id, tokenizer.end_id) == (0, 1, 2)
""")

md(r"""
Each task lives in `recipes.TASKS`: its alphabet, how many pairs to generate, the model's sizes,
the warm-up length, the number of epochs and the batch size. `recipes.task_data` generates the
pairs from a fixed seed and splits them 80/10/10 into training, validation and test sets with
another fixed seed, so every run of this chapter, and chapter 9, sees the same data:
""")

code(r"""
mt.show_source(recipes.task_data)
mt.show_source(data.split)

splits = {}
for name in recipes.TASKS:
    task_tokenizer, (train, validation, test) = recipes.task_data(name)
    splits[name] = (task_tokenizer, train, validation, test)
    print(f"{name:9s} vocabulary {task_tokenizer.vocab_size:2d}, "
          f"train {len(train):5d}, validation {len(validation):4d}, test {len(test):4d} pairs")
""")

code(r"""
rev_tokenizer, rev_train, rev_val, rev_test = splits["reversal"]
date_tokenizer, date_train, date_val, date_test = splits["dates"]
print("reversal, first training pairs:")
for source, target in rev_train[:4]:
    print(f"  {source:14s} -> {target}")
print("\ndate formats (data.DATE_FORMATS), two days written each way:")
import datetime

for i, write in enumerate(data.DATE_FORMATS):
    a, b = write(datetime.date(1998, 3, 3)), write(datetime.date(2041, 12, 21))
    print(f"  {i:2d}  {a:28s} {b:28s}")
print("targets:     1998-03-03                   2041-12-21")
print("\ndates, first training pairs:")
for source, target in date_train[:4]:
    print(f"  {source:28s} -> {target}")
""")

md(r"""
Two-digit years are read as 1950 to 2049, slashes as month/day (US order) and dots as day.month
(European order); these conventions are part of the task, and the model has to infer them from
examples. The splits never share a *source string*, so every test input is new to the model. The
same *day* can appear in several splits, written differently: a test input such as `3 Mar 1998`
may have a training cousin `03/03/98`. That is the nature of the task (there are only 36,524 days
in the range, each written 12 ways), and the model still has to parse a string it has never seen:
""")

code(r"""
for name, (_, train, validation, test) in splits.items():
    train_src, val_src, test_src = ({s for s, _ in part} for part in (train, validation, test))
    assert not (train_src & val_src or train_src & test_src or val_src & test_src)
    print(f"{name}: no source string is shared between train, validation and test")

train_days = {t for _, t in date_train}
seen = np.mean([t in train_days for _, t in date_test])
print(f"dates: {seen:.1%} of the test targets also appear as a target in training, written another way")
""")

md(r"""
## The input pipeline and teacher forcing

`model.fit` wants batches of `(inputs, labels)`. Our model takes two inputs, the source tokens and
the decoder's input tokens, so a batch is `((source, target_in), target_out)`. The package builds
the batches with `tf.data`:
""")

code(r"""
mt.show_source(data.encode_pairs)
mt.show_source(data.make_dataset)
""")

md(r"""
The stages, in order:

1. `from_tensor_slices` over **ragged** tensors: one row per example, each of its own length;
2. `shuffle` with a fixed seed over the whole training set, in a new order every epoch
   (`reshuffle_each_iteration=True`), for the training set only;
3. `padded_batch`: group 64 examples and pad each to the **longest in its batch** with id 0, so
   a batch of short strings costs less than a batch of long ones;
4. `map` into the `((source, target_in), target_out)` structure that `fit` expects;
5. `prefetch`: prepare the next batch while the model trains on this one.

A batch of four dates, small enough to print:
""")

code(r"""
small = data.make_dataset(date_train[:4], date_tokenizer, batch_size=4)
(source, target_in), target_out = (ops.convert_to_numpy(t) for t in next(iter(small))[0]), ops.convert_to_numpy(next(iter(small))[1])
print("source    ", source.shape, "\n", source)
print("target_in ", target_in.shape, "\n", target_in)
print("target_out", target_out.shape, "\n", target_out)
print("strings:", [date_tokenizer.decode(row) for row in source])
""")

md(r"""
The source needs no start or end token. The target is written twice. The decoder computes one
output per input position, and position $t$ must predict the *next* token. So the decoder input
`target_in` is the target with `<start>` in front, and the label `target_out` is the same target
with `<end>` at the back: the labels are the decoder input **shifted left by one**. This is
**teacher forcing**: during training the decoder always reads the *correct* previous tokens,
whatever it would have predicted itself, and all positions are trained in one parallel pass (the
look-ahead mask of [chapter 2](02_attention.ipynb) keeps position $t$ from reading the answer at
$t + 1$). One example, position by position:
""")

code(r"""
row = 0
tokens_in, tokens_out = date_tokenizer.tokens(target_in[row]), date_tokenizer.tokens(target_out[row])
print(f"source: {date_tokenizer.decode(source[row])!r}\n")
print("position  decoder reads  must predict")
for t, (a, b) in enumerate(zip(tokens_in, tokens_out)):
    if a == b == "<pad>":
        continue
    print(f"{t:8d}  {a:>13s}  {b:>12s}")

real = target_out[row] != data.PAD
n = int(real.sum())
assert (target_in[row, 1:n] == target_out[row, :n - 1]).all()  # shifted by one position
assert target_in[row, 0] == data.START and target_out[row, n - 1] == data.END
""")

md(r"""
The training and validation pipelines of both tasks. The training set is shuffled with a seed;
the validation set is not shuffled, its order does not matter:
""")

code(r"""
def pipelines(name):
    task = recipes.TASKS[name]
    task_tokenizer, train, validation, _ = splits[name]
    train_ds = data.make_dataset(train, task_tokenizer, task["batch_size"], shuffle=True, seed=0)
    val_ds = data.make_dataset(validation, task_tokenizer, task["batch_size"])
    return train_ds, val_ds


rev_train_ds, rev_val_ds = pipelines("reversal")
date_train_ds, date_val_ds = pipelines("dates")
for name, train_ds, val_ds in [("reversal", rev_train_ds, rev_val_ds), ("dates", date_train_ds, date_val_ds)]:
    (s, t_in), t_out = next(iter(val_ds))  # a validation batch: reading a training batch would use up a shuffle
    print(f"{name}: {int(train_ds.cardinality())} training batches per epoch; a validation batch: "
          f"source {tuple(s.shape)}, target_in {tuple(t_in.shape)}, target_out {tuple(t_out.shape)}")
""")

md(r"""
## The optimizer: Adam with warm-up

The paper trains with Adam {cite}`kingma2014adam`, which keeps running averages of each
parameter's gradient $g_t$ and squared gradient and scales each update by their ratio:

$$
m_t = \beta_1 m_{t-1} + (1 - \beta_1)\, g_t, \qquad
v_t = \beta_2 v_{t-1} + (1 - \beta_2)\, g_t^2, \qquad
\theta_t = \theta_{t-1} - \text{lrate} \cdot \frac{\hat m_t}{\sqrt{\hat v_t} + \epsilon}
$$ (eq-training-adam)

with bias-corrected $\hat m_t = m_t / (1 - \beta_1^t)$ and $\hat v_t = v_t / (1 - \beta_2^t)$.
The paper uses $\beta_1 = 0.9$, $\beta_2 = 0.98$ and $\epsilon = 10^{-9}$ (section 5.3). Keras's
defaults are $\beta_2 = 0.999$ and $\epsilon = 10^{-7}$: the paper's smaller $\beta_2$ averages
the squared gradients over about $1/(1-\beta_2) = 50$ steps instead of 1,000, so the step size
adapts faster when the gradients change scale, as they do early in training.

The learning rate is not constant. It grows linearly for `warmup_steps` steps and then decays
with the inverse square root of the step number (section 5.3, equation 3 of the paper):

$$
\text{lrate} = d_\text{model}^{-0.5} \cdot \min\left(\text{step}^{-0.5},\;
\text{step} \cdot \text{warmup\_steps}^{-1.5}\right)
$$ (eq-training-lrate)

The two terms are equal at $\text{step} = \text{warmup\_steps}$, where the rate peaks at
$(d_\text{model} \cdot \text{warmup\_steps})^{-0.5}$. The warm-up protects the start of training:
Adam's estimate $\hat v_t$ of the gradient's scale is poor over the first steps, and a post-norm
Transformer (the paper's) is easily thrown off by large early updates {cite}`xiong2020layer`. The
package's schedule is {eq}`eq-training-lrate` as a Keras `LearningRateSchedule`:
""")

code(r"""
mt.show_source(mt.TransformerSchedule)
""")

code(r"""
d_model, warmup = 64, 400
schedule = mt.TransformerSchedule(d_model, warmup)
for step in [0, 1, 2, 100, 200, warmup, 2 * warmup, 4 * warmup]:
    print(f"step {step:5d}: lrate = {float(schedule(step)):.6f}")
peak = (d_model * warmup) ** -0.5
assert np.isclose(float(schedule(warmup)), peak) and np.isclose(float(schedule(4 * warmup)), peak / 2)
print(f"peak (d_model * warmup_steps)^-0.5 = {peak:.6f}; four times later the rate has halved")
""")

md(r"""
Keras counts optimizer steps from 0: the first update is made with `schedule(0)`. Read literally,
{eq}`eq-training-lrate` at step 0 is $\min(\infty, 0) = 0$, a wasted first update (and a
division by zero). The package treats step 0 as step 1. The widely copied TensorFlow tutorial
schedule does not:
""")

code(r"""
def tutorial_schedule(step, d_model=64, warmup_steps=400):
    # The TensorFlow tutorial's CustomSchedule, step for step.
    step = tf.cast(step, tf.float32)
    return tf.math.rsqrt(float(d_model)) * tf.math.minimum(tf.math.rsqrt(step), step * warmup_steps**-1.5)


for step in [0, 1]:
    print(f"step {step}: tutorial {float(tutorial_schedule(step)):.6f}, package {float(schedule(step)):.6f}")
assert float(tutorial_schedule(0)) == 0.0 and float(schedule(0)) == float(schedule(1)) > 0
""")

md(r"""
`recipes.compile_model` puts the pieces together: Adam with the paper's constants and the
schedule, the label-smoothed, masked loss of the next two sections, and a masked accuracy:
""")

code(r"""
mt.show_source(recipes.compile_model)
""")

md(r"""
## Label smoothing

The paper trains against a softened target: "label smoothing of value $\epsilon_{ls} = 0.1$ ...
hurts perplexity, as the model learns to be more unsure, but improves accuracy and BLEU score"
(section 5.4, after {cite}`szegedy2016rethinking`). Instead of the one-hot vector of the correct
token $y$, the target distribution over the $V$ tokens of the vocabulary is

$$
q'(k) = (1 - \epsilon_{ls})\,[k = y] + \frac{\epsilon_{ls}}{V}
$$ (eq-training-smoothing)

and the loss is the cross-entropy $-\sum_k q'(k) \log p(k)$ against the model's softmax $p$.
The correct token keeps $1 - \epsilon_{ls} + \epsilon_{ls}/V$ of the probability and every other
token receives $\epsilon_{ls}/V$. With a one-hot target the loss keeps falling as the logit of
the correct token grows without bound; with {eq}`eq-training-smoothing` the best the model can do
is to predict $q'$ itself, so the logits stay finite and the model stays a little unsure.

The cross-entropy against $q'$ is smallest when $p = q'$, where it equals the entropy $H(q')$.
**Label smoothing puts a floor under the loss**: a perfect model does not reach 0. For our
vocabularies:
""")

code(r"""
def smoothed_target(label, vocab_size, epsilon=0.1):
    # Equation (eq-training-smoothing) in NumPy.
    return (1 - epsilon) * np.eye(vocab_size)[label] + epsilon / vocab_size


print("one-hot and smoothed target for label 3 of V = 6:")
print(np.eye(6)[3], "->", smoothed_target(3, 6))

floors = {}
for name, (task_tokenizer, *_) in splits.items():
    V = task_tokenizer.vocab_size
    q = smoothed_target(3, V)
    floors[name] = float(-(q * np.log(q)).sum())  # H(q')
    # The package's loss, given logits log q', reaches exactly this floor.
    package = float(mt.masked_loss(np.array([[3]]), np.log(q)[None, None], label_smoothing=0.1))
    assert np.isclose(package, floors[name], atol=1e-5)
    print(f"{name:9s} V = {V}: loss floor H(q') = {floors[name]:.3f}")
""")

code(r"""
V = date_tokenizer.vocab_size
fig, axes = plt.subplots(1, 2, figsize=(10, 2.6), sharey=True)
for ax, target, title in [(axes[0], np.eye(V)[10], "one-hot target"),
                          (axes[1], smoothed_target(10, V), "label-smoothed target, $\\epsilon_{ls}$ = 0.1")]:
    ax.bar(range(V), target, color=["tab:red" if k == 10 else "tab:blue" for k in range(V)])
    ax.set_yscale("log")
    ax.set_ylim(1e-4, 2)
    ax.set_xlabel(f"token id (V = {V})")
    ax.set_title(title)
axes[0].set_ylabel("target probability (log scale)")
fig.suptitle("Label smoothing moves 10% of the target onto all other tokens, pad and start included", y=1.04)
plt.show()
""")

md(r"""
## A loss and an accuracy over real tokens only

A batch is padded to its longest sequence, so many label positions hold `<pad>`. They are not
part of any target, and the model's predictions there must not count. The package's loss averages
the per-token cross-entropy over the non-pad positions only:

$$
\mathcal{L} = \frac{\sum_{b,t} [y_{b,t} \ne \text{pad}]\;
\mathrm{CE}\big(q'(y_{b,t}),\, p_{b,t}\big)}{\sum_{b,t} [y_{b,t} \ne \text{pad}]}
$$ (eq-training-masked-loss)
""")

code(r"""
mt.show_source(mt.masked_loss)
mt.show_source(mt.masked_accuracy)
""")

md(r"""
The difference on a batch of two labels, one with two pad positions. We build logits that are
confident and right on every real token and arbitrary on the pad positions. Then we pad the same
two sentences more, as would happen if a longer sentence joined their batch:
""")

code(r"""
rng = np.random.default_rng(0)
V = 8
labels = np.array([[5, 6, 2, 0, 0],
                   [3, 7, 4, 6, 2]])  # (B, T); 2 = <end>, 0 = <pad>
logits = rng.normal(size=(2, 5, V)).astype("float32")  # (B, T, V)
logits += 6.0 * np.eye(V)[labels] * (labels != 0)[..., None]  # confident and right on real tokens

per_token = ops.convert_to_numpy(keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
print("per-token cross-entropy (B, T):\n", np.round(per_token, 3))


def losses(labels, logits):
    keras_default = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)
    return float(keras_default), float(mt.masked_loss(labels, logits))


more_labels = np.pad(labels, ((0, 0), (0, 3)))  # three more pad positions
more_logits = np.concatenate([logits, rng.normal(size=(2, 3, V)).astype("float32")], axis=1)
print("\n                      mean over all positions   masked_loss")
for name, (y, z) in [("T = 5", (labels, logits)), ("T = 8, more padding", (more_labels, more_logits))]:
    plain, masked = losses(y, z)
    print(f"{name:22s} {plain:20.3f} {masked:13.3f}")
assert np.isclose(losses(labels, logits)[1], losses(more_labels, more_logits)[1])
assert np.isclose(losses(labels, logits)[1], per_token[labels != 0].mean())
""")

md(r"""
The masked loss is the mean over the 8 real tokens and does not change when padding is added.
The plain mean, which is what `SparseCategoricalCrossentropy()` computes by default, mixes in the
loss at pad positions: here it *rises* with the amount of padding, because the random logits there
are wrong. Trained with it, the model spends capacity on predicting `<pad>` after `<end>`, which
is easy and useless, and the loss it reports depends on how the batches happen to be padded.
With label smoothing the pad positions are worse still: even a perfect prediction of `<pad>`
there costs the floor $H(q')$, not 0.

The accuracy is masked the same way: the fraction of real label tokens whose arg-max is right.
""")

code(r"""
predicted = logits.argmax(-1)
predicted[1, 2] = 0  # one wrong prediction on a real token
wrong_logits = np.eye(V)[predicted] * 10.0
print("labels:   ", labels.tolist())
print("predicted:", predicted.tolist())
acc = float(mt.masked_accuracy(labels, wrong_logits))
plain = float(np.mean(predicted == labels))
print(f"masked_accuracy = {acc:.4f} (7 of 8 real tokens); mean over all 10 positions = {plain:.4f}")
assert np.isclose(acc, 7 / 8)
""")

md(r"""
## Training the reversal model

Everything is in place: `recipes.build_model` builds a `MinTransformer` of the task's size with
tied embeddings (one character vocabulary for source and target), and `recipes.compile_model`
adds the optimizer, the loss and the metric. The sizes are far below the paper's base model
($N = 6$, $d_\text{model} = 512$, 65 million parameters), which is what makes a CPU enough:
""")

code(r"""
for name, task in recipes.TASKS.items():
    settings = {k: task[k] for k in ("warmup_steps", "epochs", "batch_size", "output_length")}
    print(f"{name:9s} model {task['model']}\n          {settings}")
mt.show_source(recipes.build_model)
""")

md(r"""
The reversal model uses no dropout. Dropout fights overfitting to a small, noisy data set; these
tasks have no noise, and reversal needs the attention weights to land exactly on one source
position, which dropping 10% of them at random makes harder to learn. The date model keeps the
paper's $P_\text{drop} = 0.1$.

We train with `model.fit` and a validation set, with `verbose=0` (no progress bars: `fit` returns
a `History` whose `.history` dict holds one value per epoch of every loss and metric, and we print
them ourselves). The pipeline already shuffles; `fit`'s own `shuffle=` applies to arrays only, so
we pass `shuffle=False` to say so.

A long training run must survive interruptions: a Colab session that disconnects, a machine that
reboots. The callback `keras.callbacks.ModelCheckpoint` saves the model at the end of every epoch.
With `save_weights_only=False` (the default) each file is a complete `.keras` archive: the
architecture (the `get_config` of every layer), the weights, and the **optimizer's state**: its
step counter and Adam's $m$ and $v$ for every weight. We write them into a temporary directory
and stop after a few epochs, as if the session had been cut off:
""")

code(r"""
def history_table(history, first_epoch=1):
    # One row per epoch, rounded: losses to 3 decimals, accuracies to 4.
    print("epoch   loss  val_loss  accuracy  val_accuracy")
    columns = [history[k] for k in ("loss", "val_loss", "masked_accuracy", "val_masked_accuracy")]
    for i, (loss, val_loss, acc, val_acc) in enumerate(zip(*columns)):
        print(f"{first_epoch + i:5d}  {loss:.3f}  {val_loss:8.3f}  {acc:8.4f}  {val_acc:12.4f}")


rev_task = recipes.TASKS["reversal"]
checkpoint_dir = tempfile.mkdtemp()  # a fresh directory; its path is never printed
checkpoint = keras.callbacks.ModelCheckpoint(os.path.join(checkpoint_dir, "reversal-{epoch:02d}.keras"))

keras.utils.set_random_seed(0)
rev_model = recipes.build_model("reversal", rev_tokenizer)
recipes.compile_model(rev_model, rev_task["warmup_steps"])
interrupted_after = 3
first = rev_model.fit(rev_train_ds, validation_data=rev_val_ds, epochs=interrupted_after,
                      callbacks=[checkpoint], shuffle=False, verbose=0)
print(f"{rev_model.count_params():,} parameters")
history_table(first.history)
print("checkpoints:", sorted(os.listdir(checkpoint_dir)))
""")

md(r"""
### Resuming from a checkpoint

To resume, load the last checkpoint into a **new** object with `keras.saving.load_model`. The
loaded model comes back compiled, with the same loss, metric, optimizer and schedule, and with the
optimizer's step counter where it stopped. We check that the new object equals the interrupted
one: every weight, every optimizer variable (step counter, Adam's moments), and so the learning
rate it will use next:
""")

code(r"""
resumed = keras.saving.load_model(os.path.join(checkpoint_dir, f"reversal-{interrupted_after:02d}.keras"))
steps_per_epoch = int(rev_train_ds.cardinality())
print("optimizer.iterations, interrupted model:", int(rev_model.optimizer.iterations))
print("optimizer.iterations, loaded model:     ", int(resumed.optimizer.iterations),
      f"= {interrupted_after} epochs x {steps_per_epoch} steps")
print("schedule in the checkpoint:", resumed.optimizer.get_config()["learning_rate"]["config"])
print(f"learning rate of the next step: {float(resumed.optimizer.learning_rate):.6f} "
      f"= schedule({int(resumed.optimizer.iterations)})")

assert int(resumed.optimizer.iterations) == interrupted_after * steps_per_epoch
for a, b in zip(rev_model.weights, resumed.weights):
    assert np.array_equal(ops.convert_to_numpy(a), ops.convert_to_numpy(b))
for a, b in zip(rev_model.optimizer.variables, resumed.optimizer.variables):
    assert np.array_equal(ops.convert_to_numpy(a), ops.convert_to_numpy(b))
print(f"{len(resumed.weights)} weights and {len(resumed.optimizer.variables)} optimizer variables restored exactly")
""")

md(r"""
`fit(..., initial_epoch=k, epochs=E)` continues with epoch $k + 1$ up to epoch $E$, numbering
the checkpoints on. We continue with the loaded model; the interrupted one is not used again.
""")

code(r"""
second = resumed.fit(rev_train_ds, validation_data=rev_val_ds, initial_epoch=interrupted_after,
                     epochs=rev_task["epochs"], callbacks=[checkpoint], shuffle=False, verbose=0)
history_table(second.history, first_epoch=interrupted_after + 1)
print("optimizer.iterations:", int(resumed.optimizer.iterations),
      f"= {rev_task['epochs']} epochs x {steps_per_epoch} steps")
print("checkpoints:", sorted(os.listdir(checkpoint_dir)))
rev_model = resumed
rev_history = {k: first.history[k] + second.history[k] for k in first.history}
assert int(rev_model.optimizer.iterations) == rev_task["epochs"] * steps_per_epoch
""")

md(r"""
## Training the date model

The same recipe, with the date task's sizes, trained in one go. `scripts/train_date_model.py`
runs exactly these lines (and saves the weights that chapter 9 loads with
`recipes.load_pretrained_date_model()`):
""")

code(r"""
date_task = recipes.TASKS["dates"]
keras.utils.set_random_seed(0)
date_model = recipes.build_model("dates", date_tokenizer)
recipes.compile_model(date_model, date_task["warmup_steps"])
fitted = date_model.fit(date_train_ds, validation_data=date_val_ds, epochs=date_task["epochs"],
                        shuffle=False, verbose=0)
date_history = fitted.history
print(f"{date_model.count_params():,} parameters")
history_table(date_history)
""")

md(r"""
### The curves

The learning rate that the date model's optimizer actually used, read back from the optimizer's
own schedule (its config, as stored in a checkpoint) over the real number of steps, and the
losses and accuracies per epoch. The dotted lines are the floors $H(q')$ that label smoothing puts
under the loss:
""")

code(r"""
used_schedule = keras.optimizers.schedules.deserialize(date_model.optimizer.get_config()["learning_rate"])
total_steps = int(date_model.optimizer.iterations)
steps = np.arange(total_steps)
rates = ops.convert_to_numpy(used_schedule(steps))
peak_step = used_schedule.warmup_steps
print(f"{total_steps} steps; peak {rates.max():.5f} at step {int(rates.argmax())}; final {rates[-1]:.5f}")
assert int(rates.argmax()) == peak_step and np.isclose(rates.max(), (used_schedule.d_model * peak_step) ** -0.5)

fig, ax = plt.subplots(figsize=(8, 3))
ax.plot(steps, rates)
ax.plot([peak_step], [rates[peak_step]], "o", color="tab:red")
ax.annotate(f"end of warm-up: step {peak_step}, lrate {rates[peak_step]:.5f}", (peak_step, rates[peak_step]),
            xytext=(12, -4), textcoords="offset points", va="top")
for epoch in range(1, date_task["epochs"]):
    ax.axvline(epoch * total_steps / date_task["epochs"], color="0.85", lw=0.8, zorder=0)
ax.set_xlabel("optimizer step (grey lines: epoch boundaries)")
ax.set_ylabel("learning rate")
ax.set_title(f"Date model: linear warm-up for {peak_step} steps, then 1/sqrt(step) decay")
plt.show()
""")

code(r"""
fig, axes = plt.subplots(2, 2, figsize=(10, 6), sharex="col")
for col, (name, history) in enumerate([("reversal", rev_history), ("dates", date_history)]):
    epochs = np.arange(1, len(history["loss"]) + 1)
    for row, (key, label) in enumerate([("loss", "loss"), ("masked_accuracy", "token accuracy")]):
        ax = axes[row, col]
        ax.plot(epochs, history[key], "o-", label="training")
        ax.plot(epochs, history[f"val_{key}"], "s-", label="validation")
        if key == "loss":
            ax.axhline(floors[name], ls=":", color="k", label="floor H(q')")
            ax.set_title(f"{name}")
        ax.set_ylabel(label)
        if name == "reversal":
            ax.axvline(interrupted_after + 0.5, color="tab:red", ls="--", lw=1, label="resumed from checkpoint")
        ax.legend(fontsize=8)
    axes[1, col].set_xlabel("epoch")
fig.suptitle("Training and validation curves (teacher forcing); loss falls towards the label-smoothing floor", y=1.0)
plt.tight_layout()
plt.show()
""")

md(r"""
Three things to read in these curves. The reversal loss continues smoothly across the resumed
epochs: the optimizer picked up at the same step with the same moments. The training curves lie
above the validation curves: the training values are averages over each epoch while the model
improves, and for the date model they are computed with dropout active, while validation runs
in inference mode after the epoch. And the losses flatten near the floor $H(q')$: once the model
predicts the smoothed target, there is nothing left to gain.

## Results on the test split: decoding, not teacher forcing

The accuracies above are **teacher-forced**: at every position the model is given the correct
previous tokens and asked for one token. In use there is no correct previous token; the model
reads its own earlier outputs. The honest test is to decode: start from `<start>`, append the
most probable token, repeat until `<end>` (greedy decoding, the subject of chapter 9), and count a
test example as right only if the **whole** output string equals the target:
""")

code(r"""
mt.show_source(recipes.exact_match)

results = {}
for name, model in [("reversal", rev_model), ("dates", date_model)]:
    task_tokenizer, _, _, test = splits[name]
    task = recipes.TASKS[name]
    test_ds = data.make_dataset(test, task_tokenizer, task["batch_size"])
    forced = model.evaluate(test_ds, verbose=0, return_dict=True)["masked_accuracy"]
    predictions = recipes.translate(model, task_tokenizer, [s for s, _ in test], task["output_length"])
    exact = np.mean([p == t for p, (_, t) in zip(predictions, test)])
    results[name] = predictions
    print(f"{name:9s} test: teacher-forced token accuracy {forced:.4f}, "
          f"greedy exact match {exact:.4f} ({sum(p != t for p, (_, t) in zip(predictions, test))} wrong of {len(test)})")
    assert exact == recipes.exact_match(model, task_tokenizer, test, task["output_length"])

assert np.mean([p == t for p, (_, t) in zip(results["reversal"], rev_test)]) == 1.0
assert np.mean([p == t for p, (_, t) in zip(results["dates"], date_test)]) >= 0.99
""")

md(r"""
Every test reversal is exact, and at least 99% of the test dates. A handful of test predictions,
one per date format:
""")

code(r"""
for (source, target), prediction in list(zip(rev_test, results["reversal"]))[:4]:
    print(f"{source:14s} -> {prediction:14s} {'ok' if prediction == target else 'WRONG, expected ' + target}")
print()
shown = set()
for (source, target), prediction in zip(date_test, results["dates"]):
    day = datetime.date.fromisoformat(target)
    fmt = [write(day) for write in data.DATE_FORMATS].index(source)
    if fmt not in shown:
        shown.add(fmt)
        print(f"format {fmt:2d}  {source:28s} -> {prediction:10s} {'ok' if prediction == target else 'WRONG, expected ' + target}")
""")

md(r"""
And every date the model gets wrong, with the first character where it goes astray:
""")

code(r"""
errors = [(s, t, p) for p, (s, t) in zip(results["dates"], date_test) if p != t]
for source, target, prediction in errors:
    first = next((i for i, (a, b) in enumerate(zip(prediction, target)) if a != b), min(len(prediction), len(target)))
    print(f"{source:28s} expected {target}  got {prediction:12s} first wrong character at position {first}")
print(f"{len(errors)} errors of {len(date_test)}")
""")

md(r"""
Why is exact match lower than token accuracy? A date target is 11 tokens (10 characters and
`<end>`); the string is right only if all 11 are. If the token errors were independent, a token
accuracy $a$ would give an exact match of about $a^{11}$: 0.999 per token gives 0.989 per string.
Decoding is harder still than this estimate, because an error is not isolated: once the model has
written a wrong digit, every later position reads that wrong digit as its input (teacher forcing
never showed the model its own mistakes; this mismatch is called *exposure bias*). Teacher-forced
accuracy is a good training signal and a poor final metric: report what the model does when it
runs alone.

## What if the targets are not shifted?

Teacher forcing depends on one detail: the decoder input is the label shifted right. A pipeline
that feeds the labels themselves as the decoder input (`target_in == target_out`) still trains,
and its loss drops fast, because position $t$ may attend to itself (the look-ahead mask hides
only the *later* positions) and the label sits right there. The model learns to copy its input.
A short demonstration on reversal, one epoch:
""")

code(r"""
unshifted_ds = rev_train_ds.map(lambda inputs, labels: ((inputs[0], labels), labels))  # decoder reads the labels
keras.utils.set_random_seed(0)
copier = recipes.build_model("reversal", rev_tokenizer)
recipes.compile_model(copier, warmup_steps=100)  # a short warm-up: one epoch is enough to learn to copy
copied = copier.fit(unshifted_ds, epochs=1, shuffle=False, verbose=0)
print(f"after 1 epoch: training loss {copied.history['loss'][-1]:.3f}, token accuracy {copied.history['masked_accuracy'][-1]:.4f}")
print(f"(the correctly shifted model after 1 epoch: loss {rev_history['loss'][0]:.3f}, token accuracy {rev_history['masked_accuracy'][0]:.4f})")
copy_exact = recipes.exact_match(copier, rev_tokenizer, rev_test[:200], rev_task["output_length"])
print(f"greedy exact match of the copier on 200 test strings: {copy_exact:.4f}")
print("its outputs:", recipes.translate(copier, rev_tokenizer, [s for s, _ in rev_test[:4]], rev_task["output_length"]))
assert copied.history["masked_accuracy"][-1] > 0.95 and copy_exact < 0.05
""")

md(r"""
Near-perfect token accuracy after one epoch, and useless outputs: at inference the decoder reads
`<start>` and its own previous outputs, not the answer, and a model that learned to copy its input
copies nothing useful. If a training loss looks too good to be true, check the shift.

:::{admonition} Pitfalls in the sources
:class: warning

- **The sources never train their models.** Every one of them stops at a forward pass on random
  token ids and checks the output shape (`(64, 36, 8000)` in seed 004). A model with the wrong
  masks, a missing cross-attention or a doubled output layer passes that test. Train on a task
  with a known answer, and measure the answer.
- **The schedule at step 0.** Keras calls the schedule with `optimizer.iterations`, which starts
  at 0. The TensorFlow tutorial's `CustomSchedule` computes
  $\min(\text{rsqrt}(0), 0) = \min(\infty, 0) = 0$ there, so the first update has learning rate 0
  (demonstrated above). `mt.TransformerSchedule` treats step 0 as step 1.
- **The loss averaged over pad tokens.** `SparseCategoricalCrossentropy()` with its default
  reduction averages over every position of the padded batch, pads included. The loss then
  depends on how much padding the batch has, and the model is trained to predict pads. Mask the
  pad positions out of the numerator *and* the denominator {eq}`eq-training-masked-loss`.
- **Label smoothing on pad positions.** With $\epsilon_{ls} > 0$ even a perfect prediction costs
  $H(q')$ per position; unmasked pad positions add that cost, scaled by the amount of padding, to a
  loss that cannot go below it anyway. The smoothed target also gives `<pad>` and `<start>` a
  little probability as *outputs*; decoding must never emit them (the package's decoders ban both).
- **Targets that are not shifted.** Feeding `target_out` as the decoder input lets each position
  read its own label: the loss collapses, the model copies, and decoding fails (demonstrated
  above). The decoder input starts with `<start>`; the labels end with `<end>`.
- **`training` passed by position (seeds 002 and 004).** `model(x, True)` is not
  `model(x, training=True)` in Keras 3: arguments after the inputs are matched by position to
  the `call` signature, and a custom training loop that gets it wrong runs with dropout off, or
  fails. `model.fit` passes `training=True` by keyword; in your own loops, do the same.
- **Teacher-forced accuracy reported as the result.** It measures one step with a perfect
  prefix. Report what greedy (or beam) decoding produces on held-out data.
:::

## Exercises

:::{exercise}
:label: ex-training-base-schedule

For the paper's base model ($d_\text{model} = 512$, $\text{warmup\_steps} = 4000$), compute from
{eq}`eq-training-lrate` the peak learning rate, the step at which the rate has fallen to half
the peak, and the rate after the 100,000 steps the base model was trained for. Check with
`mt.TransformerSchedule`.
:::

:::{solution} ex-training-base-schedule
:class: dropdown

The peak is $(512 \cdot 4000)^{-0.5} \approx 6.99 \times 10^{-4}$ at step 4000. After the
warm-up the rate is $d_\text{model}^{-0.5}\,\text{step}^{-0.5}$, which halves when the step
quadruples: at step 16,000. At step 100,000 it is
$512^{-0.5} \cdot 100000^{-0.5} \approx 1.40 \times 10^{-4}$, a fifth of the peak.

```python
import numpy as np
import mintransformer as mt

schedule = mt.TransformerSchedule(512, 4000)
peak = float(schedule(4000))
print(f"peak {peak:.3e}, at 16000: {float(schedule(16000)):.3e}, at 100000: {float(schedule(100000)):.3e}")
assert np.isclose(peak, (512 * 4000) ** -0.5) and np.isclose(float(schedule(16000)), peak / 2)
```
:::

:::{exercise}
:label: ex-training-floor

(a) Show that the cross-entropy $-\sum_k q'(k) \log p(k)$ against the smoothed target
{eq}`eq-training-smoothing` is smallest for $p = q'$. (b) Write the floor $H(q')$ as a function of
$V$ and $\epsilon_{ls}$ and evaluate it for the date vocabulary. (c) What logits reach it, and why
do they stay finite?
:::

:::{solution} ex-training-floor
:class: dropdown

(a) $-\sum_k q' \log p = H(q') + \mathrm{KL}(q' \,\|\, p)$, and the Kullback-Leibler divergence
is $\ge 0$ with equality only for $p = q'$.

(b) With $a = 1 - \epsilon_{ls} + \epsilon_{ls}/V$ on the correct token and $b = \epsilon_{ls}/V$
on each of the $V - 1$ others, $H(q') = -a \log a - (V - 1)\, b \log b$. For the date vocabulary
this is the floor printed in the chapter, about 0.72 for $V = 59$, which is where the date
loss curves flatten.

(c) Any logits with $z_y - z_k = \log(a / b)$ for every $k \ne y$: a gap of
$\log\big((1 - \epsilon_{ls}) V / \epsilon_{ls} + 1\big) \approx 6.3$ for $V = 59$. A larger gap
makes the loss *grow* again, so the optimum is finite, unlike with a one-hot target.

```python
import numpy as np

V, eps = 59, 0.1
a, b = 1 - eps + eps / V, eps / V
print(f"H(q') = {-a * np.log(a) - (V - 1) * b * np.log(b):.3f}, logit gap {np.log(a / b):.2f}")
```
:::

:::{exercise}
:label: ex-training-backup

`ModelCheckpoint` leaves the resuming to you: choose the file, load it, pass `initial_epoch`.
`keras.callbacks.BackupAndRestore(backup_dir)` automates it: it saves the model, the optimizer and
the epoch counter at each epoch end, and when `fit` is called again with the same callback after
an interruption, it restores them and skips the epochs already done. Write a reversal training run
that is interrupted (for example by a callback that raises an exception at the end of epoch 2)
and then completed by simply calling the same `fit` again. How many epochs does the second call
train?
:::

:::{solution} ex-training-backup
:class: dropdown

```python
import tempfile
import keras
from mintransformer import data, recipes

tokenizer, (train, validation, test) = recipes.task_data("reversal")
task = recipes.TASKS["reversal"]
train_ds = data.make_dataset(train, tokenizer, task["batch_size"], shuffle=True, seed=0)


class Interrupt(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        if epoch == 1:  # end of the second epoch
            raise RuntimeError("session lost")


backup = keras.callbacks.BackupAndRestore(tempfile.mkdtemp())
model = recipes.build_model("reversal", tokenizer)
recipes.compile_model(model, task["warmup_steps"])
try:
    model.fit(train_ds, epochs=task["epochs"], callbacks=[backup, Interrupt()], shuffle=False, verbose=0)
except RuntimeError as error:
    print("interrupted:", error, "at step", int(model.optimizer.iterations))
history = model.fit(train_ds, epochs=task["epochs"], callbacks=[backup], shuffle=False, verbose=0)
print("second call trained", len(history.history["loss"]), "epochs; step", int(model.optimizer.iterations))
```

The backup written at the end of epoch 2 is restored, so the second call trains only the
remaining `epochs - 2` epochs and ends at the same step count as an uninterrupted run. (The
callback deletes its backup when training completes.)
:::

:::{exercise}
:label: ex-training-exact-vs-token

The date model's test token accuracy under teacher forcing and its greedy exact match are printed
in the chapter. (a) Using the $a^{11}$ estimate, what exact match would the token accuracy
predict? (b) Compute the token accuracy *of the greedy outputs* (position by position against the
target, over the 11 positions) and compare. (c) Look at the errors listed above: at which
position does the first wrong character usually appear, and what does that say about which part
of a date the model finds hardest?
:::

:::{solution} ex-training-exact-vs-token
:class: dropdown

(a) With $a$ the teacher-forced accuracy, $a^{11}$; with errors concentrated on a few hard
inputs, the real exact match can be higher than this estimate (several wrong tokens in the
same string cost one string), or lower (an early error derails the rest of the string under
decoding).

(b)
```python
targets = [t for _, t in date_test]
per_position = [np.mean([p[i:i + 1] == t[i] for p, t in zip(results["dates"], targets)]) for i in range(10)]
print(np.round(per_position, 4))
```

(c) The first wrong character is usually in the day or in the decade of a two-digit year: both
are digits copied from the source, where the model must pick the right one of several digits;
month names, once learned, are rarely wrong.
:::

## Summary

- The package generates two tasks with fixed, disjoint splits and a character tokenizer with
  `<pad>`, `<start>` and `<end>` at ids 0, 1 and 2. The `tf.data` pipeline shuffles with a seed,
  pads each batch to its longest example, and prefetches.
- Teacher forcing: the decoder reads `<start> y_1 ... y_n` and is trained to output
  `y_1 ... y_n <end>`; without the shift the model learns to copy.
- The paper's optimizer is Adam {eq}`eq-training-adam` with $\beta_2 = 0.98$, $\epsilon = 10^{-9}$
  and the warm-up schedule {eq}`eq-training-lrate`, which peaks at
  $(d_\text{model}\cdot\text{warmup\_steps})^{-0.5}$; Keras's step 0 must not give a rate of 0.
- Label smoothing {eq}`eq-training-smoothing` keeps the logits finite and puts a floor $H(q')$
  under the loss. Loss and accuracy count real tokens only {eq}`eq-training-masked-loss`.
- `ModelCheckpoint` writes complete `.keras` files; `keras.saving.load_model` restores the
  weights, the optimizer's moments and its step, and `fit(initial_epoch=k)` continues at the same
  learning rate.
- Judge a sequence model by decoding held-out inputs: the reversal model is exact on every test
  string, and the date model on at least 99% of the test dates. Chapter 9 takes the date model
  and looks at how it decodes: greedy search, beam search, and a cache for the keys and values.
""")

nb = nbformat.v4.new_notebook()
nb.cells = cells
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbformat.write(nb, "/work/main/chapters/08_training.ipynb")
print(len(cells), "cells")
