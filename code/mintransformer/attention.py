"""Scaled dot-product attention (paper section 3.2.1, equation 1)."""

import warnings

import keras
import numpy as np
from keras import ops

# The value masked logits are replaced with before the softmax. It is the most
# negative finite float16 (-65504), so it stays finite in float16, bfloat16 and
# float32. The sources' `-1e9` rounds to -inf in float16, and a row of -inf gives
# NaN after the softmax's max-subtraction (-inf - -inf).
MASK_FILL_VALUE = float(np.finfo(np.float16).min)


def _static_shape(x):
    shape = getattr(x, "shape", None)
    return None if shape is None else tuple(shape)


def check_mask_broadcasts(mask_shape, logits_shape):
    """Raise a ValueError unless a mask of ``mask_shape`` broadcasts to ``logits_shape``.

    Dimensions that are unknown (None) while tracing are not checked.
    """
    mask_shape, logits_shape = tuple(mask_shape), tuple(logits_shape)
    ok = len(mask_shape) <= len(logits_shape)
    if ok:
        for m, l in zip(reversed(mask_shape), reversed(logits_shape)):
            if m is not None and l is not None and m not in (1, l):
                ok = False
                break
    if not ok:
        raise ValueError(
            f"The mask of shape {mask_shape} does not broadcast to the attention "
            f"logits of shape {logits_shape} (batch, heads, queries T, keys S). "
            "Build masks with `padding_mask` (B, 1, 1, S) or `causal_mask` (T, T)."
        )


def check_mask_dtype(mask):
    """Raise a ValueError for a floating-point mask: masks are boolean (or 0/1 integers), True = may attend.

    A float mask is ambiguous: an additive mask (0 where attending, -1e9 where blocked, as some
    tutorials build them) cast to bool would read every blocked key as allowed and every allowed key
    as blocked, without an error.
    """
    dtype = getattr(mask, "dtype", None)
    dtype = keras.backend.standardize_dtype(dtype if dtype is not None else np.asarray(mask).dtype)
    if "float" in dtype:
        raise ValueError(
            f"The mask has dtype {dtype}; masks are boolean, True = may attend (Keras's convention). "
            "A float mask is ambiguous (an additive mask of 0 and -1e9 would be read backwards): "
            "convert it, e.g. `mask == 0` for an additive mask or `mask > 0.5` for a 0/1 keep-mask."
        )


def scaled_dot_product_attention(q, k, v, mask=None, dropout_layer=None, training=False, scale=None):
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, with an optional mask.

    Args:
        q: queries, shape (..., T, d_k).
        k: keys, shape (..., S, d_k).
        v: values, shape (..., S, d_v).
        mask: optional boolean tensor broadcastable to (..., T, S);
            ``True`` = may attend. Masked keys get exactly zero weight; a query whose
            keys are all masked gets all-zero weights and a zero output, never NaN.
        dropout_layer: optional Keras ``Dropout`` layer applied to the weights before they
            average the values (the returned weights are those before dropout). The layers
            take a dropout *rate*, ``dropout``; this function takes the layer that applies it.
        training: passed to ``dropout_layer``.
        scale: the factor the logits are multiplied by; None (the default) for the paper's
            1 / sqrt(d_k). ``scale=1.0`` gives the unscaled dot products (chapter 11).

    Returns:
        ``(output, weights)``: output (..., T, d_v), weights (..., T, S).
        The softmax is computed in float32 and cast back to the dtype of ``v``.
    """
    q_shape, k_shape = _static_shape(q), _static_shape(k)
    if q_shape[-1] is not None and k_shape[-1] is not None and q_shape[-1] != k_shape[-1]:
        raise ValueError(
            f"Queries and keys must have the same depth d_k, but q has shape {q_shape} "
            f"(d_k={q_shape[-1]}) and k has shape {k_shape} (d_k={k_shape[-1]})."
        )
    v_shape = _static_shape(v)
    if k_shape[-2] is not None and v_shape[-2] is not None and k_shape[-2] != v_shape[-2]:
        raise ValueError(
            f"Keys and values must cover the same S positions, but k has shape {k_shape} "
            f"(S={k_shape[-2]}) and v has shape {v_shape} (S={v_shape[-2]})."
        )
    # 1. Similarity of every query with every key, scaled so its variance stays ~1.
    # The queries are scaled *before* the product (as Keras's layer does): in float16,
    # Q K^T itself can exceed 65504 and become inf while Q K^T / sqrt(d_k) would not.
    if scale is None:
        scale = ops.rsqrt(ops.cast(ops.shape(q)[-1], "float32"))
    q = q * ops.cast(scale, q.dtype)
    logits = ops.cast(ops.matmul(q, ops.swapaxes(k, -1, -2)), "float32")  # (..., T, S)
    if mask is not None:
        check_mask_broadcasts(_static_shape(mask), _static_shape(logits))
        check_mask_dtype(mask)
        mask = ops.cast(mask, "bool")
        logits = ops.where(mask, logits, MASK_FILL_VALUE)
    # 2. Each query's weights over the keys sum to 1.
    with warnings.catch_warnings():  # one key (S = 1) is legitimate: the first decoding step
        warnings.filterwarnings("ignore", message="You are using a softmax over axis")
        weights = ops.softmax(logits, axis=-1)  # (..., T, S)
    if mask is not None:
        # Exactly zero for masked keys, also in rows where every key is masked.
        weights = ops.where(mask, weights, 0.0)
    weights = ops.cast(weights, v.dtype)
    dropped = weights if dropout_layer is None else dropout_layer(weights, training=training)
    # 3. Each output is the weighted average of the values.
    output = ops.matmul(dropped, v)  # (..., T, d_v)
    return output, weights


def tiled_attention(q, k, v, mask=None, block_size=64, scale=None):
    """Equation 1 computed over tiles of keys with an online softmax: the output, never the weights.

    The idea behind FlashAttention (Dao et al., 2022), with the running maximum and sum of the
    online softmax (Milakov and Gimelshein, 2018). The keys and values are read ``block_size``
    at a time. For each query the function keeps three running quantities: the largest logit
    so far, m; the sum of exp(logit - m), l; and the weighted sum of values, acc. At each tile,
    with m' the new running maximum, l and acc are multiplied by exp(m - m') before the tile's
    terms are added. At the end, acc / l equals softmax(Q K^T / sqrt(d_k)) V. The largest intermediate per
    head is one (T, block_size) tile of logits, never the (T, S) matrix.

    Written in ``keras.ops`` it runs the same arithmetic in another order: it shows the algorithm
    and its memory, not FlashAttention's speed. That comes from a fused GPU kernel that keeps each
    tile in on-chip memory, which Python cannot show (chapter 13).

    Args:
        q, k, v, mask, scale: as in ``scaled_dot_product_attention`` (mask True = may attend; a
            query whose keys are all masked gets a zero output).
        block_size: keys per tile, a positive int.

    Returns:
        The output (..., T, d_v), in the dtype of ``v``; equal to ``scaled_dot_product_attention``'s
        up to float32 rounding. The number of keys S must be known when the function is traced.
    """
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size={block_size!r} must be a positive int.")
    num_keys = _static_shape(k)[-2]
    if num_keys is None:
        raise ValueError("tiled_attention needs the number of keys S known when it is traced (its tiles are "
                         "a Python loop); give the tf.function an input_signature with a fixed S.")
    q_shape, k_shape = _static_shape(q), _static_shape(k)
    if q_shape[-1] is not None and k_shape[-1] is not None and q_shape[-1] != k_shape[-1]:
        raise ValueError(f"Queries and keys must have the same depth d_k, but q has shape {q_shape} "
                         f"and k has shape {k_shape}.")
    if _static_shape(v)[-2] is not None and _static_shape(v)[-2] != num_keys:
        raise ValueError(f"Keys and values must cover the same S positions: k has shape {k_shape}, "
                         f"v has shape {_static_shape(v)}.")
    if mask is not None:
        check_mask_dtype(mask)
        logits_shape = tuple(q_shape[:-1]) + (num_keys,)
        check_mask_broadcasts(_static_shape(mask), logits_shape)
        mask = ops.cast(mask, "bool")
    if scale is None:
        scale = ops.rsqrt(ops.cast(ops.shape(q)[-1], "float32"))
    q32 = ops.cast(q, "float32") * ops.cast(scale, "float32")
    k32, v32 = ops.cast(k, "float32"), ops.cast(v, "float32")
    m = l = acc = None  # running maximum (..., T, 1), sum (..., T, 1), weighted values (..., T, d_v)
    for start in range(0, num_keys, block_size):
        stop = min(start + block_size, num_keys)
        logits = ops.matmul(q32, ops.swapaxes(k32[..., start:stop, :], -1, -2))  # (..., T, b): one tile
        keep = None
        if mask is not None:
            keep = mask if _static_shape(mask)[-1] == 1 else mask[..., start:stop]
            logits = ops.where(keep, logits, MASK_FILL_VALUE)
        tile_max = ops.max(logits, axis=-1, keepdims=True)  # (..., T, 1)
        m_new = tile_max if m is None else ops.maximum(m, tile_max)
        p = ops.exp(logits - m_new)  # (..., T, b), each at most 1
        if keep is not None:
            p = ops.where(keep, p, 0.0)  # masked keys add nothing, even in a row with no key left
        tile_values = ops.matmul(p, v32[..., start:stop, :])  # (..., T, d_v)
        if m is None:
            l, acc = ops.sum(p, axis=-1, keepdims=True), tile_values
        else:
            correction = ops.exp(m - m_new)  # rescale what was summed under the old maximum
            l = l * correction + ops.sum(p, axis=-1, keepdims=True)
            acc = acc * correction + tile_values
        m = m_new
    output = ops.where(l > 0, acc / ops.where(l > 0, l, 1.0), 0.0)  # a row with every key masked: 0
    return ops.cast(output, v.dtype)
