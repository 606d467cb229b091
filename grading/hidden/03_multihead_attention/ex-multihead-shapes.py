"""Hidden cases of ex-multihead-shapes: the shapes themselves (the public check confirms the format).

Merged after the public check (mt.exercises.merged_source): _sizes, HINTS and _shape are its.
"""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt


def _truth(B, T, S, D, H):
    """The shapes of mt.MultiHeadAttention's tensors, step by step (inputs of zeros)."""
    layer = mt.MultiHeadAttention(d_model=D, num_heads=H)
    query, key = np.zeros((B, T, D), "float32"), np.zeros((B, S, D), "float32")
    projected = {"query projection": layer.wq(query), "key projection": layer.wk(key),
                 "value projection": layer.wv(key)}
    q, k, v = (mt.split_heads(projected[n], H) for n in ("query projection", "key projection", "value projection"))
    heads, weights = mt.scaled_dot_product_attention(q, k, v)
    merged = mt.merge_heads(heads)
    tensors = dict(projected, **{"split queries": q, "split keys": k, "split values": v,
                                 "logits": weights, "weights": weights, "head outputs": heads,
                                 "merged": merged, "output": layer.wo(merged)})
    return {n: tuple(int(d) for d in t.shape) for n, t in tensors.items()}


def _wrong(key, got, right, B, T, S, H):
    """The message for a known wrong shape, or None."""
    where = f'`shapes["{key}"]` = {got}'
    if key.startswith("split") and len(got) == 4 and got == (right[0], right[2], right[1], right[3]):
        return (f"{where} is the shape after the reshape (B, length, h, d_k), before the transpose: "
                "split_heads puts the heads before the positions.")
    if len(got) == len(right) and got[-1] != right[-1] and got[:-1] == right[:-1] and key.startswith("split"):
        return f"{where}: each head has d_k = d_model / h features, not {got[-1]}."
    if key in ("logits", "weights"):
        if got == (B, H, S, T):
            return (f"{where}: which of the last two axes holds the queries, and which the keys? A row of the "
                    "logits is what one query's softmax runs over.")
        if got == (B, T, S):
            return f"{where} has no head axis: every head has its own logits and weights."
    if key in ("head outputs", "merged", "output") and S in got and T not in got:
        return (f"{where} has the keys' length: attention returns one row per query, so everything "
                f"after the weights has the queries' length T = {T} (the head-splitting walkthrough's "
                "mistake).")
    if key == "merged" and len(got) == 4:
        return f"{where} still has a head axis: Concat joins the h heads of width d_k into one axis."
    if key == "head outputs" and len(got) == 3:
        return f"{where} has no head axis: before the merge every head has its own output."
    return None


def _check(shapes, keys, STUDENT_ID, shapes_numbers):
    B, T, S, D, H = _sizes(STUDENT_ID, shapes_numbers)  # noqa: F821 (the public check's)
    truth = _truth(B, T, S, D, H)
    for key in keys:
        got = _shape(shapes, key)  # noqa: F821 (the public check's)
        if got != truth[key]:
            raise AssertionError(_wrong(key, got, truth[key], B, T, S, H) or
                                 f'`shapes["{key}"]` = {got} is not right. {HINTS[key]}')  # noqa: F821


@test_case(points=1, hidden=True)
def hidden_projections_and_split(shapes, STUDENT_ID, shapes_numbers):
    _check(shapes, ["query projection", "key projection", "value projection",
                    "split queries", "split keys", "split values"], STUDENT_ID, shapes_numbers)


@test_case(points=1, hidden=True)
def hidden_logits_and_weights(shapes, STUDENT_ID, shapes_numbers):
    _check(shapes, ["logits", "weights"], STUDENT_ID, shapes_numbers)


@test_case(points=1, hidden=True)
def hidden_heads_merge_and_output(shapes, STUDENT_ID, shapes_numbers):
    _check(shapes, ["head outputs", "merged", "output"], STUDENT_ID, shapes_numbers)
