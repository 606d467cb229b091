"""Exercise: the label-smoothed cross-entropy over real tokens only, written from its equations."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, to_numpy

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


def _per_token(labels, logits, eps):
    """Per-token losses (B, T) of the right smoothing and of known wrong ones, with messages."""
    z = logits.astype("float64")
    log_p = z - z.max(-1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(-1, keepdims=True))
    V = z.shape[-1]
    nll = -np.take_along_axis(log_p, labels[..., None], -1)[..., 0]
    total = -log_p.sum(-1)  # sum over the V ids of -log p
    right = (1 - eps) * nll + eps * total / V
    if not eps:
        return right, []
    return right, [
        ((1 - eps) * nll + eps * (total - nll) / (V - 1),
         "your smoothing gives the correct token 1 - eps and spreads eps over the V - 1 others; the paper's "
         "q' gives eps/V to every token, the correct one included"),
        (nll + eps * total / V,
         "your target is the one-hot plus eps/V: scale the one-hot part by 1 - eps"),
        (nll, "label_smoothing is ignored: with eps > 0 the target is q', not the one-hot label"),
        ((1 - eps) * nll, "the smoothing term is missing: add eps times the mean over the vocabulary of -log p"),
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
    got = to_numpy(call(my_masked_loss, "my_masked_loss", labels, logits, label_smoothing=eps, pad_id=pad_id),
                   "my_masked_loss's result")
    if got.size != 1:
        raise AssertionError(f"{case}: my_masked_loss must return one number (a scalar); it has shape {got.shape}.")
    got = got.reshape(())
    expected = float(mt.masked_loss(labels, logits, label_smoothing=eps, pad_id=pad_id))
    right, tokens_wrong = _per_token(labels, logits, eps)
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
          hint="Per token: (1 - eps) * (-log p[y]) + eps * mean over the V ids of (-log p[v]), with "
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
