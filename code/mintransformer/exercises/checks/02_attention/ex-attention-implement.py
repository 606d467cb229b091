"""Exercise: scaled dot-product attention with a mask, written from its equation."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import Unanswered, call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-attention-implement"
points = 5

RULE = ("`my_attention` calls the package's scaled_dot_product_attention (or a layer built on it): write "
        "the attention yourself, from the equation.")

NO_MASK = "weights = softmax(Q K^T / sqrt(d_k)) along the last axis (over the keys)."
EMPTY_ROW = ("A query that may attend to no key gets weights 0 and output 0: not NaN "
             "(a softmax of -inf everywhere) and not uniform weights (a finite fill value alone).")
BLOCKED = ("A blocked key (mask False) gets weight exactly 0: replace its logit before the softmax "
           "(ops.where with a very negative number), or set its weight to 0 after it.")
ALLOWED = ("Blocked keys get 0 and each row's allowed keys share 1, as softmax(Q K^T / sqrt(d_k)) "
           "over the allowed keys only: replace the blocked logits before the softmax.")


def _inputs(seed, shape_q=(2, 3, 4, 8), shape_k=(2, 3, 5, 8), d_v=6):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=shape_q).astype("float32")
    k = rng.normal(size=shape_k).astype("float32")
    v = rng.normal(size=shape_k[:-1] + (d_v,)).astype("float32")
    return q, k, v


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _masked_weights(logits, keep):
    """The package's weights for these logits: softmax over the allowed keys, 0 elsewhere."""
    if keep is None:
        return _softmax(logits)
    with np.errstate(invalid="ignore"):  # a row with no allowed key: NaN, then 0
        w = _softmax(np.where(keep, logits, -np.inf))
    return np.where(keep, np.nan_to_num(w), 0.0)


def _known_mistakes(q, k, v, keep):
    """[(what went wrong, the weights it gives)] for the natural mistakes."""
    q, k = q.astype("float64"), k.astype("float64")
    logits = q @ np.swapaxes(k, -1, -2)
    d_k, d_v = q.shape[-1], v.shape[-1]
    mistakes = [("these are the weights of softmax(Q K^T), unscaled: divide the logits by sqrt(d_k).",
                 _masked_weights(logits, keep))]
    if d_v != d_k:
        mistakes.append(("you divided the logits by sqrt(d_v); the scale is sqrt(d_k), the depth of "
                         "the queries and keys (q.shape[-1]).", _masked_weights(logits / np.sqrt(d_v), keep)))
    if keep is not None:
        mistakes.append(("you set the blocked weights to 0 after a softmax over all the keys, so the "
                         "allowed weights of a row no longer sum to 1. Replace the blocked logits before "
                         "the softmax.", np.where(keep, _softmax(logits / np.sqrt(d_k)), 0.0)))
    return mistakes


def _hint(w, ref, keep):
    """The hint for the entry where the weights are most wrong."""
    if keep is None:
        return NO_MASK
    error = np.where(np.isfinite(w), np.abs(w - ref), np.inf)
    where = np.unravel_index(np.argmax(error), error.shape)
    if not keep[where[:-1]].any():
        return EMPTY_ROW
    return ALLOWED if keep[where] else BLOCKED


def _causal(T, S, mask=None):
    """The look-ahead rule for T queries that are the last T of S positions, AND ``mask``."""
    allowed = np.arange(S)[None, :] <= np.arange(S - T, S)[:, None]  # (T, S): key s <= S - T + t
    return allowed if mask is None else allowed & (to_numpy(mask, "mask") > 0)


def _causal_mistakes(q, k, v, mask):
    """[(what went wrong, the weights it gives)] for the natural mistakes of causal=True."""
    T, S = q.shape[-2], k.shape[-2]

    def weights(m):
        return to_numpy(mt.scaled_dot_product_attention(q, k, v, mask=m)[1], "")

    first = np.tril(np.ones((T, S), bool))  # the queries put at positions 0 .. T - 1
    mistakes = [("your look-ahead puts the T queries at positions 0 to T - 1. Here they are the LAST T of "
                 "the S positions (as in decoding with a cache): query t sits at position S - T + t.",
                 weights(first if mask is None else first & (to_numpy(mask, "mask") > 0))),
                ("with causal=True your weights are those without any mask: apply the look-ahead rule.",
                 weights(None))]
    if mask is not None:
        mistakes += [("with causal=True you ignored `mask` (or used it alone): both apply.", weights(_causal(T, S))),
                     ("with causal=True you used `mask` alone: apply the look-ahead rule too.", weights(mask))]
    return mistakes


def _compare(my_attention, q, k, v, mask, case, causal=False):
    given = mask
    if causal:
        mask = _causal(q.shape[-2], k.shape[-2], given)
    ref_output, ref_weights = (to_numpy(t, "") for t in mt.scaled_dot_product_attention(q, k, v, mask=mask))
    mistakes = _causal_mistakes(q, k, v, given) if causal else []
    kwargs = dict(mask=given, causal=True) if causal else dict(mask=mask)
    try:
        with refusing([mt.scaled_dot_product_attention], my_attention, RULE):
            result = call(my_attention, "my_attention", q, k, v, **kwargs)
    except AssertionError as error:
        if q.ndim < 4 and str(error) != RULE and not isinstance(error, Unanswered):
            raise AssertionError(
                f"{case}: {error} Your attention must work for any number of leading axes: transpose only "
                "the last two axes of k, whatever comes before them."
            ) from None
        raise
    if not (isinstance(result, tuple) and len(result) == 2):
        raise AssertionError("`my_attention` must return a pair: (output, weights).")
    output, weights = result
    if (like(output, ref_weights, atol=1e-4) or (
            ref_output.shape != ref_weights.shape and np.shape(output) == ref_weights.shape
            and np.shape(weights) == ref_output.shape)):
        raise AssertionError(f"{case}: you returned (weights, output); return (output, weights), in that order.")
    w = to_numpy(weights, "the weights array")
    keep = None if mask is None else np.broadcast_to(to_numpy(mask, "mask") > 0, ref_weights.shape)
    if keep is not None and w.shape == keep.shape:
        mixed = keep.any(axis=-1, keepdims=True) & ~keep.all(axis=-1, keepdims=True)  # rows with both kinds
        mixed = np.broadcast_to(mixed, keep.shape)
        if np.all(w[mixed & keep] < 1e-3) and np.any(w[mixed & ~keep] > 1e-3):
            raise AssertionError(
                f"{case}: the keys the mask allows get weight 0 and the blocked ones get it all. "
                "In this book a mask is True where a query MAY attend (Keras's convention), not 1 = blocked."
            )
    for mistake, wrong in mistakes + _known_mistakes(q, k, v, keep):
        if like(w, wrong) and not like(w, ref_weights):
            raise AssertionError(f"{case}: {mistake}")
    close(w, ref_weights, f"{case}: the weights array", atol=1e-5,
          hint=_hint(w, ref_weights, keep) if w.shape == ref_weights.shape else "")
    if keep is not None and np.any(w[~keep] != 0):
        raise AssertionError(
            f"{case}: the blocked weights must be exactly 0, and some of yours are not (up to "
            f"{np.abs(w[~keep]).max():.2g}). Fill the blocked logits with a number whose exp is 0 in "
            "float32 (mt.MASK_FILL_VALUE, or -1e9), or set the blocked weights to 0 after the softmax."
        )
    close(output, ref_output, f"{case}: the output", atol=1e-5, hint="output = weights @ V.")


@test_case(points=1)
def without_mask(my_attention):
    q, k, v = _inputs(0)
    _compare(my_attention, q, k, v, None, "Without a mask")


@test_case(points=1)
def with_padding_and_look_ahead_masks(my_attention):
    q, k, v = _inputs(1, (2, 3, 5, 8), (2, 3, 5, 8))
    tokens = np.array([[5, 6, 7, 0, 0], [5, 6, 7, 8, 9]])
    _compare(my_attention, q, k, v, mt.padding_mask(tokens), "With a padding mask (B, 1, 1, S)")
    _compare(my_attention, q, k, v, mt.decoder_self_mask(tokens), "With a decoder mask (B, 1, T, T)")


@test_case(points=1)
def a_query_with_nothing_to_attend_to(my_attention):
    q, k, v = _inputs(2, (1, 1, 2, 4), (1, 1, 3, 4))
    mask = np.array([[True, True, False], [False, False, False]])  # query 1 may see no key
    _compare(my_attention, q, k, v, mask, "A query whose mask row is all False")


@test_case(points=1)
def fewer_leading_axes(my_attention):
    q, k, v = _inputs(3, (4, 8), (5, 8))  # one example, one head: (T, d_k)
    _compare(my_attention, q, k, v, None, "Queries (T, d_k) without batch or head axes")
    q, k, v = _inputs(4, (2, 4, 8), (2, 5, 8))  # (B, T, d_k)
    mask = np.array([[True, True, False, False, False]] * 4)[None] & np.array([True, False])[:, None, None]
    mask[1, 0] = True  # sentence 1: query 0 sees every key, the others none
    _compare(my_attention, q, k, v, mask, "Queries (B, T, d_k) with a mask (B, T, S)")


@test_case(points=1)
def causal_with_fewer_queries_than_keys(my_attention):
    q, k, v = _inputs(5, (2, 1, 5, 8), (2, 1, 5, 8))
    _compare(my_attention, q, k, v, None, "causal=True, T = S = 5", causal=True)
    q, k, v = _inputs(6, (2, 1, 2, 8), (2, 1, 5, 8))
    _compare(my_attention, q, k, v, None, "causal=True, T = 2 queries over S = 5 keys", causal=True)
    padding = mt.padding_mask(np.array([[3, 4, 5, 6, 0], [3, 4, 5, 6, 7]]))  # (B, 1, 1, S)
    _compare(my_attention, q, k, v, padding, "causal=True and a padding mask, T = 2, S = 5", causal=True)
