"""Write chapters/09_inference.ipynb from the cells below (outputs are filled by run_notebook.py)."""

import nbformat

CELLS = []


def md(text):
    CELLS.append(nbformat.v4.new_markdown_cell(text.strip("\n")))


def code(text, tags=None):
    cell = nbformat.v4.new_code_cell(text.strip("\n"))
    if tags:
        cell.metadata["tags"] = tags
    CELLS.append(cell)


code('''
# In Colab, install this book's package from its repository; elsewhere, do nothing.
import sys

if "google.colab" in sys.modules:
    %pip install -q "git+https://github.com/mintransformer-book/mintransformer"
''')

md(r'''
# 9. Inference and what attention learned

[Chapter 8](08_training.ipynb) trained a Transformer to rewrite dates the way people write them
("Tuesday, 17 March 1998", "03/17/98", "17th of March 1998") as ISO dates ("1998-03-17"). During
training the decoder never had to produce anything: it was *given* the correct previous characters
(teacher forcing) and only scored the next one. At inference time there is no correct answer to
lean on. The model must write its output one token at a time, feeding each token back in as the
input for the next step. This chapter is about that loop: how to choose the tokens, how to make
the loop fast, how to look inside the trained model, and how to ship it as one file that turns a
raw string into an ISO date.

## Learning objectives

After this chapter you can:

- write the autoregressive factorisation {eq}`eq-inference-chain` and turn it into a decoding loop;
- explain greedy decoding and beam search with the length penalty {eq}`eq-inference-length-penalty`
  of {cite}`wu2016google`, as used by {cite}`vaswani2017attention` (beam size 4, $\alpha = 0.6$),
  and measure both on a test set;
- explain the key/value cache, prove that cached decoding gives the same logits and the same
  tokens as the full forward pass, and relate its speed-up to the cost formulas
  {eq}`eq-inference-step-cost` and {eq}`eq-inference-total-cost`;
- read the attention weights of a trained model, head by head, and say what they do and do not show;
- export a model as a TensorFlow SavedModel that maps raw strings to output strings.
''')

code('''
import mintransformer as mt
import keras
import matplotlib.pyplot as plt
import numpy as np
import tensorflow as tf
from keras import ops
from mintransformer import data, recipes

keras.utils.set_random_seed(0)
np.set_printoptions(precision=4, suppress=True)
''')

md(r'''
## The trained date model

`mt.recipes.load_pretrained_date_model()` rebuilds the chapter-8 model (2 encoder and 2 decoder
layers, $d_\text{model} = 64$, $h = 4$ heads, tied embeddings) and loads the weights that
`scripts/train_date_model.py` trained; it takes a second, so this chapter never trains anything.
The tokenizer works on characters: ids 0, 1, 2 are `<pad>`, `<start>` and `<end>`, every other id
is one character. The test split holds dates the model never saw during training.
''')

code('''
model, tokenizer = recipes.load_pretrained_date_model()
_, (_, _, test_pairs) = recipes.task_data("dates")
OUTPUT_LENGTH = recipes.TASKS["dates"]["output_length"]  # the most tokens we let the decoder write
PAD, START, END = tokenizer.pad_id, tokenizer.start_id, tokenizer.end_id

print(f"{model.count_params():,} parameters, vocabulary of {tokenizer.vocab_size} tokens, "
      f"N={model.num_layers}, d_model={model.d_model}, h={model.num_heads}")
print(f"{len(test_pairs)} test pairs, output length limit {OUTPUT_LENGTH}; the first five:")
for source, target in test_pairs[:5]:
    print(f"  {source!r:30} -> {target}")
''')

md(r'''
## Autoregressive decoding

The decoder defines a probability for a whole output sequence $y = (y_1, \dots, y_n)$ given the
source $x$ through the chain rule of probability: one factor per position, each conditioned on
everything written before it,

$$
p(y \mid x) = \prod_{t=1}^{n} p(y_t \mid y_{<t},\, x),
\qquad
\log p(y \mid x) = \sum_{t=1}^{n} \log p(y_t \mid y_{<t},\, x)
$$ (eq-inference-chain)

where $y_n$ is the `<end>` token and $y_{<t} = (y_1, \dots, y_{t-1})$. The look-ahead mask of
[chapter 6](06_encoder_decoder_layers.ipynb) is exactly what makes the decoder's output at position
$t$ a function of $y_{<t}$ only, so one forward pass over `<start>` $y_1 \dots y_{t-1}$ gives, in
its last row, the distribution $p(\,\cdot \mid y_{<t}, x)$ of {eq}`eq-inference-chain`.

Generating therefore means: start with `<start>`, run the model, choose a token from the last
row, append it, run again, and stop at `<end>`. The cell below does this by hand for one input,
printing the three most probable next characters at every step, and sums the log-probabilities of
the chosen tokens as in {eq}`eq-inference-chain`. Choosing the most probable token at every step is
*greedy decoding*.
''')

code('''
text = "Tuesday, 17 March 1998"
source = data.pad([tokenizer.encode(text)])  # (1, S)
prefix = [START]  # what the decoder has read so far
log_p = 0.0
for t in range(OUTPUT_LENGTH):
    logits = ops.convert_to_numpy(model((source, np.array([prefix], "int32")), training=False))
    logits = logits[0, -1]  # (V,): the last row predicts the next token
    logits[[PAD, START]] = -np.inf  # never generate these (see the pitfalls below)
    probs = ops.convert_to_numpy(ops.softmax(logits))
    top3 = np.argsort(-probs)[:3]
    best = int(top3[0])
    log_p += np.log(probs[best])
    shown = "  ".join(f"{tokenizer.id_to_token[i]!r}: {probs[i]:.4f}" for i in top3)
    print(f"step {t + 1:2d}  read {tokenizer.decode(prefix[1:])!r:14} next: {shown}")
    prefix.append(best)
    if best == END:
        break

by_hand = prefix[1:]
print(f"\\noutput {tokenizer.decode(by_hand)!r}, log p(y|x) = {log_p:.4f}, p(y|x) = {np.exp(log_p):.4f}")
package = mt.greedy_decode(model, source, START, END, OUTPUT_LENGTH)[0]
assert list(package[:len(by_hand)]) == by_hand
print("mt.greedy_decode produces the same tokens")
''')

md(r'''
Most steps are easy for this model: the top token gets almost all of the probability. Where the
model hesitates is instructive; the digits that must be *computed* (the month number from the
word "March") rather than *copied* are the ones to watch.

### Greedy decoding, batched

The package's `greedy_decode` runs the same loop for a whole batch at once: every sequence
advances one position per step, a sequence that has written `<end>` keeps being computed (a batch
is a rectangle) but its later outputs are overwritten with `<pad>`, and the loop stops early when
every sequence is done. The logits of `<pad>` and `<start>` are set to $-\infty$ before the argmax:
the model was never trained to produce them, and a `<pad>` fed back into the decoder would be
masked out as padding. The argument `use_cache` is the subject of the second half of the chapter.
''')

code('''
mt.show_source(mt.greedy_decode)
''')

md(r'''
Exact match counts an output as correct only if every character is right. A few hundred test
sentences are enough to see that the model is nearly perfect:
''')

code('''
test = test_pairs[:500]
test_sources = [s for s, _ in test]
greedy_outputs = recipes.translate(model, tokenizer, test_sources, OUTPUT_LENGTH)
greedy_em = np.mean([p == t for p, (_, t) in zip(greedy_outputs, test)])
print(f"greedy decoding, exact match on {len(test)} test dates: {greedy_em:.4f}")
''')

md(r'''
## Beam search with a length penalty

Greedy decoding maximises each factor of {eq}`eq-inference-chain` on its own, which need not
maximise the product: a token that looks best now can lead to a continuation where every choice is
poor. Searching all $V^n$ sequences is impossible, so translation systems use **beam search**: keep
the $k$ best partial hypotheses (the *beam*), extend each with every token, and keep the $k$ best of
the $k \cdot V$ extensions. A hypothesis that writes `<end>` is finished and keeps its score.

Scoring by $\log p(y \mid x)$ alone has a bias: every extra token multiplies in a probability below
one, so short hypotheses win. The Transformer paper uses "beam search with a beam size of 4 and
length penalty $\alpha = 0.6$" (section 6.1 of {cite}`vaswani2017attention`), the normalisation of
Google's neural translation system {cite}`wu2016google`: a hypothesis $Y$ of $|Y|$ tokens
(`<end>` included) is ranked by

$$
\mathrm{lp}(Y) = \frac{(5 + |Y|)^\alpha}{(5 + 1)^\alpha},
\qquad
s(Y, X) = \frac{\log P(Y \mid X)}{\mathrm{lp}(Y)}
$$ (eq-inference-length-penalty)

With $\alpha = 0$ the penalty is 1 and $s$ is the plain log-probability; with $\alpha = 1$ it
divides by (roughly) the length, an average log-probability per token; $\alpha = 0.6$ is in between.
(Wu et al. also add a *coverage* penalty for source words that received little attention; the
Transformer paper does not mention it, and the package leaves it out.) Because $\log P \le 0$,
dividing by a larger $\mathrm{lp}$ brings the score of a longer hypothesis closer to zero, that is,
raises it:
''')

code('''
mt.show_source(mt.length_penalty)
lengths = np.array([1, 5, 10, 20, 50])
for alpha in (0.0, 0.6, 1.0):
    print(f"alpha={alpha}: lp(|Y|) for |Y| = {lengths}: {np.round(mt.length_penalty(lengths, alpha), 4)}")
''')

md(r'''
The package's `beam_search` is batched like `greedy_decode`: the $B$ sources are repeated $k$ times
and decoded as one batch of $B \cdot k$ rows. Three details are worth reading in the code. At the
first step all $k$ beams hold the same `<start>`, so only beam 0 is alive (the others start at
$-\infty$), otherwise the top $k$ would be one hypothesis repeated $k$ times. A finished beam has
exactly one continuation, `<pad>`, which adds nothing to its log-probability and does not lengthen
it. And after choosing the $k$ best extensions, the rows are *reordered* (`order`): the
hypothesis in row 2 may now continue the one that was in row 0, and everything the decoder keeps
about a row (the prefix, and the cache of the second half of this chapter) must move with it.
''')

code('''
mt.show_source(mt.beam_search)
''')

code('''
beam_outputs = recipes.translate(model, tokenizer, test_sources, OUTPUT_LENGTH,
                                 decoder=mt.beam_search, beam_size=4, alpha=0.6)
beam_em = np.mean([p == t for p, (_, t) in zip(beam_outputs, test)])
print(f"exact match on {len(test)} test dates: greedy {greedy_em:.4f}, beam search (k=4, alpha=0.6) {beam_em:.4f}")

differ = [(s, t, g, b) for (s, t), g, b in zip(test, greedy_outputs, beam_outputs) if g != b]
print(f"greedy and beam outputs differ on {len(differ)} of {len(test)} dates")
for s, t, g, b in differ:
    print(f"  {s!r:30} target {t}  greedy {g}  beam {b}")
wrong = [(s, t, g) for (s, t), g in zip(test, greedy_outputs) if g != t]
print("greedy mistakes:")
for s, t, g in wrong:
    print(f"  {s!r:30} target {t}  greedy {g}")
''')

md(r'''
BEAM_DISCUSSION
''')

md(r'''
### Inside the beam for one input

`beam_search` returns only the winner. To see the competition, the cell below runs the same
algorithm for a single input, written with Python lists so that each hypothesis can be printed:
every unfinished hypothesis is extended by its $k$ most probable tokens (the $k$ best of all
$k \cdot V$ extensions are always among these), finished ones are carried over unchanged, and the
$k$ best by the score {eq}`eq-inference-length-penalty` survive. It runs the full model on the
live prefixes at every step (no cache), which is slower but easy to follow; the assertion checks
that its winner is the package's.
''')

code('''
def beam_trace(text, beam_size=4, alpha=0.6):
    """The final beam for one input: (tokens, log P, finished) triples, best first."""
    source = data.pad([tokenizer.encode(text)])  # (1, S)
    beam = [([], 0.0, False)]  # one live hypothesis at the start
    score = lambda hyp: hyp[1] / mt.length_penalty(len(hyp[0]), alpha)  # s(Y, X)
    for _ in range(OUTPUT_LENGTH):
        live = [hyp for hyp in beam if not hyp[2]]
        prefixes = np.array([[START] + tokens for tokens, _, _ in live], "int32")  # (n, t + 1)
        logits = ops.convert_to_numpy(
            model((np.repeat(source, len(live), axis=0), prefixes), training=False))[:, -1]  # (n, V)
        logits[:, [PAD, START]] = -np.inf
        log_probs = ops.convert_to_numpy(ops.log_softmax(logits.astype("float64")))  # (n, V)
        candidates = [hyp for hyp in beam if hyp[2]]  # finished hypotheses compete unchanged
        for (tokens, log_p, _), row in zip(live, log_probs):
            for i in np.argsort(-row)[:beam_size]:
                candidates.append((tokens + [int(i)], log_p + row[i], i == END))
        beam = sorted(candidates, key=score, reverse=True)[:beam_size]
        if all(finished for _, _, finished in beam):
            break
    return beam


def show_beam(text, alpha=0.6):
    beam = beam_trace(text, alpha=alpha)
    print(f"{text!r}: final beam (k=4, alpha={alpha})")
    for tokens, log_p, _ in beam:
        lp = mt.length_penalty(len(tokens), alpha)
        print(f"  {tokenizer.decode(tokens)!r:14} |Y|={len(tokens):2d}  log P={log_p:9.4f}  "
              f"lp={lp:.4f}  score={log_p / lp:9.4f}  P={np.exp(log_p):.4f}")
    package = mt.beam_search(model, data.pad([tokenizer.encode(text)]), START, END, OUTPUT_LENGTH,
                             beam_size=4, alpha=alpha)[0]
    assert tokenizer.decode(package) == tokenizer.decode(beam[0][0])


show_beam("Tuesday, 17 March 1998")
show_beam(UNSURE_TEXT)
''')

md(r'''
BEAM_TRACE_DISCUSSION
''')

md(r'''
## Incremental decoding with a key/value cache

Look again at the loop we wrote by hand: step $t$ runs the *whole* model on the whole prefix. It
re-encodes the source, which has not changed, and recomputes the decoder's states at positions
$1, \dots, t-1$, which cannot have changed either: the look-ahead mask guarantees that position
$i$ depends only on positions $\le i$. Only the newest position is new work.

What does the new position need from the old ones? In self-attention its query is compared with
the **keys** of all positions so far and averages their **values**; everything else in a decoder
layer (the feed-forward network, layer norms, residuals) acts on each position alone. So each
decoder layer keeps a *cache* of the keys and values of past positions, appends the new position's
key and value at each step, and attends with one query. Cross-attention is even simpler: its keys and
values are projections of the encoder output, which depends only on the source, so they are
computed once per source, when the cache is created.

Per decoding step $t$ in a model of width $d = d_\text{model}$, ignoring constant factors and the
number of layers, the work is

$$
\text{uncached: } \underbrace{t\,d^2}_{\text{projections, FFN on } t \text{ positions}}
+ \underbrace{t^2 d}_{t \text{ queries} \times t \text{ keys}}
\qquad
\text{cached: } \underbrace{d^2}_{\text{one position}} + \underbrace{t\,d}_{1 \text{ query} \times t \text{ keys}}
$$ (eq-inference-step-cost)

(plus, without the cache, the encoder and the cross-attention keys and values all over again).
Summed over an output of $T$ tokens:

$$
\sum_{t=1}^{T} \left(t\,d^2 + t^2 d\right) = O\!\left(T^2 d^2 + T^3 d\right)
\qquad\text{versus}\qquad
\sum_{t=1}^{T} \left(d^2 + t\,d\right) = O\!\left(T d^2 + T^2 d\right)
$$ (eq-inference-total-cost)

For outputs shorter than the model width ($T < d$) the $d^2$ terms dominate: the work of a step
grows linearly with $t$ without the cache and stays nearly constant with it, and the total grows
as $T^2$ against $T$. The cache costs memory instead: two tensors of shape (B, h, T, $d_k$) per
layer for self-attention and two of shape (B, h, S, $d_k$) for cross-attention.

`Decoder.start_cache` encodes nothing itself; it receives the encoder output (`context`) and
projects it into each layer's cross-attention keys and values, and it allocates each layer's
self-attention buffers:
''')

code('''
mt.show_source(mt.Decoder, only="start_cache")
''')

md(r'''
`DecoderLayer.step` is `DecoderLayer.call` for one new position. The buffers have a fixed length
$L$ (the most positions the decoder will write), and the new key and value are *written into* slot
`position` rather than concatenated: with fixed shapes, TensorFlow compiles the step function once
instead of once per length. The boolean mask `seen` hides the slots not yet written (Keras's mask
convention: `True` = may attend). Because each row of the mask allows only positions $\le t$, this
is the look-ahead mask, one row at a time.
''')

code('''
mt.show_source(mt.DecoderLayer, only="step")
''')

md(r'''
The model's `decode_step` embeds the new token, runs it through every layer's `step` and applies
the output projection. One detail is easy to get wrong: the positional encoding must be that of
the token's real position `position`, not of position 0 (a (B, 1) tensor fed to the ordinary
embedding would get position 0 at every step). `PositionalEmbedding.embed_step` takes the position
explicitly:
''')

code('''
mt.show_source(mt.MinTransformer, only="decode_step")
mt.show_source(mt.PositionalEmbedding, only="embed_step")
''')

md(r'''
### Checking the cache

The claim "cached decoding computes the same thing" is checked in two ways. First, feed a batch of
correct targets (teacher forcing) through the full model once, and through `decode_step` one
position at a time: the logits must agree at *every* position, up to float32 rounding.
''')

code('''
batch = test[:16]
source = data.pad([tokenizer.encode(s) for s, _ in batch])  # (B, S)
target_in = data.pad([tokenizer.encode(t, add_start=True) for _, t in batch])  # (B, T)
full = ops.convert_to_numpy(model((source, target_in), training=False))  # (B, T, V)

caches = model.start_cache(source, max_length=target_in.shape[1])
stepped = []
for t in range(target_in.shape[1]):
    logits, caches = model.decode_step(target_in[:, t:t + 1], t, caches, source)  # (B, V)
    stepped.append(ops.convert_to_numpy(logits))
stepped = np.stack(stepped, axis=1)  # (B, T, V)

print("cache of layer 0:", {name: tuple(value.shape) for name, value in caches[0].items()})
print(f"full pass {full.shape}, step by step {stepped.shape}, "
      f"largest |difference| {np.abs(full - stepped).max():.1e}")
assert np.allclose(full, stepped, atol=1e-4)
''')

md(r'''
Second, decode the test dates greedily with and without the cache. The logits differ only by
rounding, far below the gap between the best and second-best token, so the tokens must be
**identical**:
''')

code('''
test_source = data.pad([tokenizer.encode(s) for s in test_sources])  # (500, S)
cached = mt.greedy_decode(model, test_source, START, END, OUTPUT_LENGTH, use_cache=True)
uncached = mt.greedy_decode(model, test_source, START, END, OUTPUT_LENGTH, use_cache=False)
assert np.array_equal(cached, uncached)
print(f"cached and uncached greedy decoding: identical tokens for all {len(cached)} test dates")
''')

md(r'''
### How much time the cache saves

Dates are short (11 output tokens), so to see the growth with the output length we build a bigger,
randomly initialised model with room for 128 positions: 2 layers, $d_\text{model} = 128$, a batch
of 32 random sources of length 32, and `end_id=-1`, an id that never occurs, so that every run
writes exactly the requested number of tokens. Its outputs are meaningless; only the work counts.
Each measurement is the fastest of two runs after one warm-up run (the first call compiles the
step functions).
''')

code('''
keras.utils.set_random_seed(0)
big = mt.MinTransformer(num_layers=2, d_model=128, num_heads=4, dff=512, input_vocab_size=64,
                        target_vocab_size=64, max_length=128, dropout=0.0, share_embeddings=True)
big_source = np.random.default_rng(0).integers(3, 64, size=(32, 32)).astype("int32")  # (B, S)
big((big_source, big_source[:, :1]))  # build the weights
print(f"timing model: {big.count_params():,} parameters, batch {big_source.shape}")
''')

code('''
import time


def decode_seconds(length, use_cache, repeats=2):
    """Fastest of ``repeats`` timed runs of greedy decoding ``length`` tokens, after a warm-up."""
    mt.greedy_decode(big, big_source, START, -1, length, use_cache=use_cache)  # compile, warm up
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        mt.greedy_decode(big, big_source, START, -1, length, use_cache=use_cache)
        times.append(time.perf_counter() - begin)
    return min(times)


lengths = [8, 16, 32, 64]
seconds = {cache: [decode_seconds(n, cache) for n in lengths] for cache in (True, False)}
for n, c, u in zip(lengths, seconds[True], seconds[False]):
    print(f"T={n:3d}: cached {c:6.3f} s, uncached {u:6.3f} s, uncached / cached = {u / c:4.1f}")
''', tags=["nbval-ignore-output"])

code('''
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
for use_cache, label, marker in [(True, "with key/value cache", "o"), (False, "without cache", "s")]:
    total = np.array(seconds[use_cache])
    axes[0].plot(lengths, total, marker=marker, label=label)
    axes[1].plot(lengths, 1000 * total / np.array(lengths), marker=marker, label=label)
axes[0].set(xlabel="output length T (tokens)", ylabel="seconds", xticks=lengths,
            title="Total decoding time")
axes[1].set(xlabel="output length T (tokens)", ylabel="milliseconds per token", xticks=lengths,
            title="Average time per generated token")
for ax in axes:
    ax.grid(alpha=0.3)
    ax.legend()
fig.suptitle("Greedy decoding, batch 32, 2 layers, d_model 128 (CPU)", y=1.02)
plt.show()
''', tags=["nbval-ignore-output"])

md(r'''
TIMING_DISCUSSION
''')

md(r'''
## What attention learned

Every attention layer of the model returns its weights, and `model.attention_scores(source, target)`
collects them in a dictionary of NumPy arrays (inference mode, so no dropout): for each layer
`encoder/layer_i/self_attention` of shape (B, h, S, S), `decoder/layer_i/self_attention` of shape
(B, h, T, T) and `decoder/layer_i/cross_attention` of shape (B, h, T, S). We decode one input,
feed `<start>` plus the decoded output back in as the target, and look at the weights of every
head. In the plots of the decoder, each row is labelled with the token that row **produces** (row
$t$ reads `<start>` $y_1 \dots y_{t-1}$ and predicts $y_t$); spaces in the source are drawn as ␣.
''')

code('''
def attention_example(text):
    """Decode ``text`` and return (source (1, S), decoder input (1, T), produced tokens, weights)."""
    source = data.pad([tokenizer.encode(text)])  # (1, S)
    output = mt.greedy_decode(model, source, START, END, OUTPUT_LENGTH)[0]
    n = list(output).index(END) + 1  # tokens produced, <end> included
    target_in = np.array([[START] + list(output[:n - 1])], "int32")  # (1, T): what the decoder reads
    return source, target_in, output[:n], model.attention_scores(source, target_in)


def labels(ids):
    return ["␣" if token == " " else token for token in tokenizer.tokens(ids)]


text = "Tuesday, 17 March 1998"
source, target_in, produced, scores = attention_example(text)
src_labels, out_labels = labels(source[0]), labels(produced)
print(f"{text!r} -> {tokenizer.decode(produced)!r}")
for name, weights in scores.items():
    print(f"{name:35} {weights.shape}")
''')

md(r'''
### Cross-attention: where each output character reads from

Cross-attention is where the decoder consults the source, so it is the place to look for an
*alignment*: which input characters does the model read while writing each output character?
Here are the four heads of each decoder layer.
''')

code('''
for layer in range(model.num_layers):
    mt.plotting.plot_attention_heads(
        scores[f"decoder/layer_{layer}/cross_attention"][0], query_labels=out_labels,
        key_labels=src_labels, ncols=2, size=4.6,
        title=f"Decoder layer {layer}, cross-attention (rows: produced token, columns: source)")
    plt.show()
''')

md(r'''
CROSS_DISCUSSION
''')

code('''
def strongest_sources(weights):
    """For each produced token, the source characters holding most of the weight (h, T, S)."""
    for row, label in enumerate(out_labels):
        top = np.argsort(-weights[row])[:3]
        shown = ", ".join(f"{src_labels[j]!r}@{j}: {weights[row, j]:.2f}" for j in top)
        print(f"  produces {label!r:8} reads {shown}")


CROSS_LAYER, CROSS_HEAD = CROSS_LH
print(f"decoder layer {CROSS_LAYER}, cross-attention head {CROSS_HEAD}:")
strongest_sources(scores[f"decoder/layer_{CROSS_LAYER}/cross_attention"][0, CROSS_HEAD])
''')

md(r'''
CROSS_HEAD_DISCUSSION
''')

code('''
average = scores[f"decoder/layer_{model.num_layers - 1}/cross_attention"][0].mean(axis=0)  # (T, S)
ax = mt.plotting.plot_matrix(average, row_labels=out_labels, col_labels=src_labels, vmin=0, vmax=1,
                             xlabel="source character", ylabel="produced token",
                             title="Last decoder layer, cross-attention averaged over the heads")
ax.figure.set_size_inches(9, 4.5)
plt.show()
''')

md(r'''
AVERAGE_DISCUSSION
''')

md(r'''
### The same date, written another way

If the model really reads the month from the month's name, the alignment should move with it when
the date is written differently. Here are four ways to write the same date, with the
cross-attention of the head above:
''')

code('''
fig, axes = plt.subplots(1, 4, figsize=(16, 4.2))
for ax, text in zip(axes, FORMATS):
    source, _, produced, other = attention_example(text)
    weights = other[f"decoder/layer_{CROSS_LAYER}/cross_attention"][0, CROSS_HEAD]  # (T, S)
    mt.plotting.plot_matrix(weights, ax=ax, row_labels=labels(produced), col_labels=labels(source[0]),
                            vmin=0, vmax=1, colorbar=False, title=f"{text!r}")
fig.suptitle(f"Decoder layer {CROSS_LAYER}, cross-attention head {CROSS_HEAD}: "
             f"the same date in four formats", y=1.0)
fig.tight_layout()
plt.show()
''')

md(r'''
FORMATS_DISCUSSION
''')

md(r'''
### Self-attention in the encoder and the decoder

The encoder's self-attention has no single "right" picture: it builds representations of each
source character from its neighbours, which the decoder then reads. The decoder's self-attention
is lower-triangular by construction (the look-ahead mask), and here it has little to do: the
output format is fixed, so a row mostly needs to know *where* in the ISO date it is.
''')

code('''
mt.plotting.plot_attention_heads(
    scores[f"encoder/layer_{ENC_LAYER}/self_attention"][0], query_labels=src_labels, key_labels=src_labels,
    ncols=4, size=3.6, title=f"Encoder layer {ENC_LAYER}, self-attention (rows: query, columns: key)")
plt.show()
''')

md(r'''
ENCODER_DISCUSSION
''')

code('''
mt.plotting.plot_attention_heads(
    scores[f"decoder/layer_{DEC_LAYER}/self_attention"][0], query_labels=out_labels,
    key_labels=labels(target_in[0]), ncols=4, size=3.0,
    title=f"Decoder layer {DEC_LAYER}, self-attention (rows: produced token, columns: decoder input)")
plt.show()
''')

md(r'''
DECODER_DISCUSSION

Attention maps are evidence, not explanations. A weight says how much of a position's value vector
was mixed in, not whether the result mattered for the output; after the first encoder layer a
"character" position already carries information about its neighbours, so a later layer looking at
`M` may be reading the whole word. The clean diagonals and the month-name lookups are real, but
conclusions about *why* the model is right need interventions (change the input and watch the output),
which the exercises try.
''')

md(r'''
## Exporting the model: from raw string to ISO date

A Keras model takes token ids. A user has a string. To ship the model we wrap tokenizer, decoding
loop and detokenizer into one `tf.Module` whose `__call__` is a `tf.function` with a fixed input
signature (a batch of strings of any size), and save it as a TensorFlow SavedModel. The SavedModel
holds the graph and the weights; it can be loaded without this book's package and served with
TensorFlow Serving, or called from any TensorFlow program.

Everything inside must be TensorFlow operations, so the Python tokenizer is rewritten with TF string
ops:

- `tf.strings.unicode_decode` turns each string into its Unicode code points (a ragged tensor: the
  strings have different lengths), and a `tf.lookup.StaticHashTable` maps code points to token ids.
  Unknown characters map to `<pad>` and are masked out (the Python tokenizer would raise an error);
- the greedy loop with the key/value cache becomes a `for t in tf.range(...)` loop, which AutoGraph
  turns into one `tf.while_loop`: the step is traced once instead of once per output position;
- the output ids are turned back into characters with `tf.gather` on a table of strings, everything
  from `<end>` on is dropped, and `tf.strings.reduce_join` glues each row into one string.
''')

code('''
class DateNormalizer(tf.Module):
    """Raw date strings -> ISO date strings: tokenize, greedy-decode with the cache, detokenize."""

    def __init__(self, model, tokenizer, output_length):
        super().__init__()
        self.model, self.output_length = model, output_length
        self.pad_id, self.start_id, self.end_id = tokenizer.pad_id, tokenizer.start_id, tokenizer.end_id
        chars = list(tokenizer.alphabet)
        self.char_to_id = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant([ord(c) for c in chars], tf.int32),  # Unicode code point
                tf.constant([tokenizer.token_to_id[c] for c in chars], tf.int32)),
            default_value=tokenizer.pad_id)  # unknown characters become padding
        self.id_to_text = tf.constant(  # specials print as nothing
            [token if i > tokenizer.end_id else "" for i, token in enumerate(tokenizer.id_to_token)])
        banned = np.zeros(tokenizer.vocab_size, "float32")
        banned[[tokenizer.pad_id, tokenizer.start_id]] = -1e9  # never generate pad or start
        self.banned = tf.constant(banned)  # (V,)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def __call__(self, texts):
        codes = tf.strings.unicode_decode(texts, "UTF-8")  # ragged (B, None) code points
        source = self.char_to_id.lookup(codes).to_tensor(default_value=self.pad_id)  # (B, S)
        batch = tf.shape(source)[0]
        caches = self.model.start_cache(source, self.output_length)
        token = tf.fill([batch, 1], self.start_id)  # (B, 1)
        done = tf.zeros([batch], tf.bool)
        ids = tf.TensorArray(tf.int32, size=self.output_length)
        for t in tf.range(self.output_length):  # AutoGraph: a tf.while_loop
            logits, caches = self.model.decode_step(token, t, caches, source)  # (B, V)
            next_id = tf.argmax(logits + self.banned, axis=-1, output_type=tf.int32)  # (B,)
            ids = ids.write(t, tf.where(done, self.pad_id, next_id))
            done = done | tf.equal(next_id, self.end_id)
            token = next_id[:, None]  # (B, 1)
        ids = tf.transpose(ids.stack())  # (B, L)
        after_end = tf.cumsum(tf.cast(tf.equal(ids, self.end_id), tf.int32), axis=1) > 0  # (B, L)
        chars = tf.gather(self.id_to_text, tf.where(after_end, self.pad_id, ids))  # (B, L) strings
        return tf.strings.reduce_join(chars, axis=1)  # (B,)
''')

md(r'''
We save it to a temporary directory, load it back as if in another program, and ask it about dates
that are in no split of the data set:
''')

code('''
import shutil
import tempfile

tf.get_logger().setLevel("ERROR")  # no "Assets written to <path>" log line
export_dir = tempfile.mkdtemp()
tf.saved_model.save(DateNormalizer(model, tokenizer, OUTPUT_LENGTH), export_dir)
reloaded = tf.saved_model.load(export_dir)

queries = ["Friday, 13 October 2023", "march 3rd, 98", "Tuesday, 17 March 1998", "01-JAN-2000",
           "12/25/49", "2049/12/31", "29th of February 2024", "Mon 1 Jan 24"]
answers = [a.decode() for a in reloaded(tf.constant(queries)).numpy()]
for query, answer in zip(queries, answers):
    print(f"{query!r:28} -> {answer}")
assert answers == recipes.translate(model, tokenizer, queries, OUTPUT_LENGTH)
print("the reloaded SavedModel agrees with recipes.translate")
shutil.rmtree(export_dir)
''')

md(r'''
EXPORT_DISCUSSION
''')

md(r'''
:::{admonition} Pitfalls in the sources
:class: warning
- **Re-running the encoder at every step.** The `Translator` of TensorFlow's "Neural machine
  translation with a Transformer and Keras" tutorial calls the whole model on the whole prefix at
  every step, encoder included. The result is correct, but step $t$ costs
  {eq}`eq-inference-step-cost` without the cache, and the encoder is recomputed $T$ times for an
  input that never changes. Encode once; with a cache, decode one position per step.
- **Letting the model choose `<pad>` or `<start>`.** Greedy and beam search take an argmax over
  the whole vocabulary. A well-trained model gives these ids almost no probability, but a weak
  or unlucky one can pick `<pad>`, which the next step then masks away as padding: the output
  silently loses a token. Set their logits to $-\infty$ before choosing.
- **The wrong position in cached decoding.** With a cache the decoder sees a (B, 1) input at each
  step. Passing it through the ordinary embedding adds the positional encoding of position 0 every
  time; the new token must get the encoding of its real position (`embed_step(tokens, position)`).
  The check of this chapter that `decode_step` equals the full pass at every position catches it.
- **Forgetting to reorder the cache in beam search.** When the beam is re-sorted, row $i$ may
  continue a hypothesis that lived in row $j$; its cached keys and values must move with it.
- **Comparing hypotheses of different lengths by raw log-probability.** Every token adds a
  negative term to $\log P$, so without a length penalty beam search favours short outputs, and
  it gets worse with a larger beam. Rank by {eq}`eq-inference-length-penalty` and compare finished
  hypotheses by the same score. The length $|Y|$ must be counted the same way for all of them
  (here: generated tokens, `<end>` included).
- **Identical beams at the start.** If all $k$ beams start alive with the same `<start>`, the top
  $k$ of the first step are $k$ copies of the same hypothesis. Start with one live beam.
- **Dropout at inference.** Decode with `training=False`; with dropout on, the output changes from
  call to call and the cached and uncached paths disagree.
:::
''')

md(r'''
## Exercises

:::{exercise}
:label: ex-inference-beam-one
Explain why beam search with `beam_size=1` is greedy decoding, whatever $\alpha$ is. Then check it
on the 500 test dates: the token arrays of `mt.beam_search(..., beam_size=1)` and
`mt.greedy_decode` must be equal.
:::

:::{solution} ex-inference-beam-one
:class: dropdown
With one beam there is one live hypothesis. All its extensions at step $t$ have the same length
$t$, so they share the same $\mathrm{lp}$ in {eq}`eq-inference-length-penalty`, and the best score
is the best $\log P$ = the previous $\log P$ + the log-probability of the new token: the argmax
token, as in greedy decoding. When that token is `<end>` the hypothesis is finished and the search
stops, as greedy decoding does.

```python
source = data.pad([tokenizer.encode(s) for s in test_sources])
greedy = mt.greedy_decode(model, source, START, END, OUTPUT_LENGTH)
for alpha in (0.0, 0.6, 2.0):
    beam_1 = mt.beam_search(model, source, START, END, OUTPUT_LENGTH, beam_size=1, alpha=alpha)
    assert np.array_equal(greedy, beam_1)
```
:::

:::{exercise}
:label: ex-inference-length-penalty
Two finished hypotheses compete: $A$ has $|A| = 5$ tokens and $\log P(A) = -2.0$, $B$ has
$|B| = 9$ tokens and $\log P(B) = -2.6$. Which one does beam search return for $\alpha = 0$,
$0.6$ and $1$? For which $\alpha$ do they tie?
:::

:::{solution} ex-inference-length-penalty
:class: dropdown
With {eq}`eq-inference-length-penalty`, $s(A) = -2.0 \cdot (6/10)^\alpha$ and
$s(B) = -2.6 \cdot (6/14)^\alpha$.

```python
for alpha in (0.0, 0.6, 1.0):
    a = -2.0 / mt.length_penalty(5, alpha)
    b = -2.6 / mt.length_penalty(9, alpha)
    print(f"alpha={alpha}: s(A)={a:.4f}, s(B)={b:.4f} -> {'A' if a > b else 'B'}")
```

$A$ wins for $\alpha = 0$ ($-2.0 > -2.6$) and $\alpha = 0.6$ ($-1.472 > -1.564$); $B$ wins for
$\alpha = 1$ ($-1.114 > -1.2$). They tie when $2.0\,(14/10)^\alpha = 2.6$, i.e.
$\alpha = \ln 1.3 / \ln 1.4 \approx 0.78$. The paper's $\alpha = 0.6$ still prefers the shorter
hypothesis here: the penalty weakens the bias towards short outputs without turning it into a bias
towards long ones.
:::

:::{exercise}
:label: ex-inference-cache-memory
How much memory does the key/value cache of the base model (6 decoder layers, $d_\text{model} =
512$, float32) take for a batch of 32 sentences with source and target length 100? Write the
formula, evaluate it, and check the formula on the date model's cache from `model.start_cache`.
:::

:::{solution} ex-inference-cache-memory
:class: dropdown
Each decoder layer stores keys and values for self-attention, (B, h, T, $d_k$) each, and for
cross-attention, (B, h, S, $d_k$) each; $h \cdot d_k = d_\text{model}$. So the cache holds
$2 N B (T + S)\, d_\text{model}$ numbers: $2 \cdot 6 \cdot 32 \cdot 200 \cdot 512 = 39{,}321{,}600$
floats, 157 MB in float32, about 60% of the base model's own 65 million parameters (260 MB). It
grows linearly with batch size and length, which is why long-context serving systems worry about
cache memory more than about weights.

```python
def cache_numbers(num_layers, batch, target_length, source_length, d_model):
    return 2 * num_layers * batch * (target_length + source_length) * d_model

print(f"base model: {cache_numbers(6, 32, 100, 100, 512) * 4 / 1e6:.0f} MB")
source = data.pad([tokenizer.encode(s) for s in test_sources[:32]])  # (32, S)
caches = model.start_cache(source, OUTPUT_LENGTH)
counted = sum(int(np.prod(v.shape)) for cache in caches for v in cache.values())
assert counted == cache_numbers(model.num_layers, 32, OUTPUT_LENGTH, source.shape[1], model.d_model)
```
:::

:::{exercise}
:label: ex-inference-position
Break the cache on purpose: decode the 16 teacher-forced targets of the cache check step by step,
but embed every new token as if it stood at position 0 (call `model.target_embedding` on the (B, 1)
token instead of `embed_step`, then `model.decoder.step` and `model.output_projection`). How large
is the difference to the full pass now, and do the greedy argmax tokens still agree?
:::

:::{solution} ex-inference-position
:class: dropdown
The logits now differ by whole units, not by rounding, and many argmax tokens change: without the
right positional encoding the decoder cannot tell which character of the ISO date it is writing.

```python
batch = test[:16]
source = data.pad([tokenizer.encode(s) for s, _ in batch])
target_in = data.pad([tokenizer.encode(t, add_start=True) for _, t in batch])
full = ops.convert_to_numpy(model((source, target_in), training=False))
caches = model.start_cache(source, target_in.shape[1])
cross_mask = mt.padding_mask(source, PAD)
wrong = []
for t in range(target_in.shape[1]):
    x = model.target_embedding(target_in[:, t:t + 1])  # position 0 every time: the bug
    x, caches = model.decoder.step(x, caches, t, cross_mask=cross_mask)
    wrong.append(ops.convert_to_numpy(model.output_projection(x))[:, 0])
wrong = np.stack(wrong, axis=1)
print(f"largest |difference|: {np.abs(full - wrong).max():.2f}")
print(f"argmax agreement: {np.mean(full.argmax(-1) == wrong.argmax(-1)):.2%}")
```
:::
''')

md(r'''
## Summary

- A decoder defines $p(y \mid x)$ as a product of next-token distributions
  {eq}`eq-inference-chain`; generating means choosing one token at a time and feeding it back in.
- Greedy decoding takes the argmax at every step; beam search keeps the $k$ best hypotheses and
  ranks them by $\log P / \mathrm{lp}$ {eq}`eq-inference-length-penalty` (paper: $k = 4$,
  $\alpha = 0.6$). Both are batched in the package. SUMMARY_BEAM
- The key/value cache stores each decoder layer's past keys and values and the cross-attention
  keys and values of the source, so a step processes one position: the work per step no longer
  grows with the prefix ({eq}`eq-inference-step-cost`, {eq}`eq-inference-total-cost`).
  `decode_step` reproduces the full pass's logits at every position, cached and uncached greedy
  decoding produce identical tokens, and the cache was SUMMARY_SPEED faster for 64 tokens here.
- SUMMARY_ATTENTION
- A `tf.Module` with a string-typed `tf.function` bundles tokenizer, cached greedy loop and
  detokenizer into one SavedModel that maps raw strings to ISO dates.

The next step in the paper is scale: the same model, trained on millions of sentence pairs, is what
the BLEU scores of its Table 2 measure.
''')


def build(path, replacements):
    cells = []
    for cell in CELLS:
        cell = nbformat.from_dict(dict(cell))
        for key, value in replacements.items():
            cell.source = cell.source.replace(key, value)
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, path)


if __name__ == "__main__":
    import json
    import sys

    replacements = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else {}
    build(sys.argv[1], replacements)
