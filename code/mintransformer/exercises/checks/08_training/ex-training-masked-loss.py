"""Exercise: the masked cross-entropy against the Annotated Transformer's smoothed target (no mass on the pad)."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-training-masked-loss"
points = 3


def _batch(seed, V, pad_id=0, lengths=(6, 4, 2, 5)):
    """Labels (B, T) padded with pad_id after each length, and random logits (B, T, V)."""
    rng = np.random.default_rng(seed)
    T = max(lengths)
    real = [k for k in range(V) if k != pad_id]
    labels = rng.choice(real, size=(len(lengths), T))
    labels = np.where(np.arange(T)[None] < np.array(lengths)[:, None], labels, pad_id)
    logits = (2.0 * rng.normal(size=(len(lengths), T, V))).astype("float32")
    return labels, logits


def _dense(labels, logits, eps, pad_id):
    """The reference, the long way: the (B, T, V) target of the Annotated Transformer's LabelSmoothing."""
    z = logits.astype("float64")
    log_p = z - z.max(-1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
    V = z.shape[-1]
    target = np.full(z.shape, eps / (V - 2))
    np.put_along_axis(target, labels[..., None], 1 - eps, -1)
    target[..., pad_id] = 0.0
    per_token = -(target * log_p).sum(-1)
    keep = labels != pad_id
    return (per_token * keep).sum() / max(keep.sum(), 1)


def _per_token(labels, logits, eps, pad_id):
    """Per-token losses (B, T) of the exercise's target and of known wrong ones, with messages."""
    z = logits.astype("float64")
    log_p = z - z.max(-1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
    V = z.shape[-1]
    nll = -np.take_along_axis(log_p, labels[..., None], -1)[..., 0]
    total = -log_p.sum(-1)  # sum over the V ids of -log p
    pad = -log_p[..., pad_id]  # -log p(pad)
    right = (1 - eps) * nll + eps * (total - nll - pad) / (V - 2)
    if not eps:
        return right, []
    return right, [
        ((1 - eps) * nll + eps * total / V,
         "this is the package's q' (and Keras's): eps/V on every token, the pad included. The exercise's target "
         "gives the pad 0 and spreads eps over the V - 2 tokens that are neither the label nor the pad"),
        ((1 - eps) * nll + eps * (total - nll) / (V - 1),
         "you leave the label out of the smoothing but not the pad: the pad gets 0 in this target, so leave out "
         "its -log p too, and divide by V - 2"),
        ((1 - eps) * nll + eps * (total - pad) / (V - 1),
         "you leave the pad out of the smoothing but not the label: the label gets exactly 1 - eps, the eps "
         "goes to the V - 2 others"),
        ((1 - eps) * nll + eps * (total - nll - pad) / V,
         "you divide the smoothing by V: eps is spread over the V - 2 tokens that are neither the label nor the "
         "pad, so the target sums to 1 only with eps/(V - 2) each"),
        ((1 - eps) * nll + eps * (total - nll - pad) / (V - 1),
         "you divide the smoothing by V - 1: it is spread over V - 2 tokens (neither the label nor the pad)"),
        (nll + eps * (total - nll - pad) / (V - 2),
         "the label's weight is 1 - eps, not 1: the target must sum to 1"),
        (nll, "label_smoothing is ignored: with eps > 0 the target is smoothed, not the one-hot label"),
        ((1 - eps) * nll, "the smoothing term is missing: add eps/(V - 2) times the sum of -log p over the tokens "
                          "that are neither the label nor the pad"),
    ]


def _reductions(per_token, keep):
    """The right mean over real tokens and known wrong reductions, with messages."""
    count = max(keep.sum(), 1)
    lengths = np.maximum(keep.sum(1), 1)
    return (per_token * keep).sum() / count, [
        (per_token.mean(),
         "you average over every position, pads included (what SparseCategoricalCrossentropy() does by "
         "default): divide the sum over real tokens by the number of real tokens"),
        (((per_token * keep).sum(1) / lengths).mean(),
         "you average each sequence, then the sequences: a short sequence then weighs as much as a long one. "
         "Divide the sum over ALL real tokens of the batch by their number"),
        ((per_token * keep).sum(), "you return the sum: divide it by the number of real tokens"),
    ]


def _check(my_masked_loss, labels, logits, eps, pad_id, case):
    expected = _dense(labels, logits, eps, pad_id)  # outside the refusing block
    with refusing([mt.masked_loss], my_masked_loss, "Write the loss yourself: do not call mt.masked_loss (its "
                  "target is not this one anyway: it gives the pad eps/V)."):
        result = call(my_masked_loss, "my_masked_loss", labels, logits, label_smoothing=eps, pad_id=pad_id)
    got = to_numpy(result, "my_masked_loss's result")
    if got.size != 1:
        raise AssertionError(f"{case}: my_masked_loss must return one number (a scalar); it has shape {got.shape}.")
    got = got.reshape(())
    right, tokens_wrong = _per_token(labels, logits, eps, pad_id)
    if pad_id != 0 and eps:
        tokens_wrong.append((_per_token(labels, logits, eps, 0)[0],
                             f"your target gives 0 to id 0, but the pad id here is {pad_id}: the column that gets "
                             "no smoothing is pad_id's"))
    keeps = [(labels != pad_id, "")]
    if pad_id != 0:
        keeps.append((labels != 0, f"you leave out id 0, but the pad id here is {pad_id}: use pad_id"))
    for per_token, token_message in [(right, "")] + tokens_wrong:
        for keep, keep_message in keeps:
            mean, wrong_means = _reductions(per_token, keep)
            for value, reduce_message in [(mean, "")] + wrong_means:
                message = "; ".join(m for m in (token_message, keep_message, reduce_message) if m)
                if message and like(got, value, rtol=1e-4) and not like(expected, value, rtol=1e-4):
                    raise AssertionError(f"{case}: {message[0].upper() + message[1:]}.")
    close(got, expected, f"{case}: your loss", atol=1e-5, rtol=1e-5,
          hint="Split the cross-entropy against this target as the chapter splits it against q', with "
          "log p = log_softmax(logits); then the mean over the tokens whose label is not pad_id.")


@test_case(points=1)
def without_smoothing(my_masked_loss):
    labels, logits = _batch(0, V=7)
    _check(my_masked_loss, labels, logits, 0.0, 0, "Without smoothing (label_smoothing=0)")


@test_case(points=1)
def with_label_smoothing(my_masked_loss):
    for seed, V, eps in [(1, 7, 0.1), (2, 11, 0.3)]:
        labels, logits = _batch(seed, V=V)
        _check(my_masked_loss, labels, logits, eps, 0, f"With label_smoothing={eps}, V = {V}")


@test_case(points=1)
def another_pad_id_and_an_empty_batch(my_masked_loss):
    labels, logits = _batch(3, V=9, pad_id=3)
    _check(my_masked_loss, labels, logits, 0.1, 3, "With pad_id=3")
    empty = np.zeros((2, 3), "int64")
    got = to_numpy(call(my_masked_loss, "my_masked_loss", empty, logits[:2, :3], label_smoothing=0.1, pad_id=0),
                   "my_masked_loss's result")
    if not np.all(np.isfinite(got)):
        raise AssertionError(
            "A batch with no real token gives NaN: 0 / 0. Divide by max(number of real tokens, 1), "
            "as mt.masked_loss does, so that it gives 0.")
    close(got.reshape(()), 0.0, "Your loss on a batch of pads only", atol=1e-6)
