"""Exercise: find and fix the bug of an attention computed over tiles of keys with an online softmax."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import LIBRARIES, call, close, library_softmaxes, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-modern-fix-online-softmax"
points = 2

RULE = ("Fix the tiled loop of the buggy code: do not call the package's tiled_attention or "
        "scaled_dot_product_attention, nor a library softmax.")


def _full(q, k, v):
    return to_numpy(mt.scaled_dot_product_attention(q, k, v)[0], "")


def _tiled(q, k, v, block_size, rescale_sum=True, rescale_values=True):
    """The online softmax over tiles of keys, in float64, and known wrong versions of it (the messages name none)."""
    q, k, v = (np.asarray(a, "float64") for a in (q, k, v))
    m = total = acc = None
    for start in range(0, k.shape[-2], block_size):
        s = q @ np.swapaxes(k[..., start:start + block_size, :], -1, -2) / np.sqrt(q.shape[-1])
        m_new = s.max(-1, keepdims=True) if m is None else np.maximum(m, s.max(-1, keepdims=True))
        p = np.exp(s - m_new)
        tile = p @ v[..., start:start + block_size, :]
        if m is None:
            total, acc = p.sum(-1, keepdims=True), tile
        else:
            factor = np.exp(m - m_new)
            total = (factor if rescale_sum else 1.0) * total + p.sum(-1, keepdims=True)
            acc = (factor if rescale_values else 1.0) * acc + tile
        m = m_new
    return acc / total


def _check(online_attention, q, k, v, block_size, what, atol=1e-5):
    expected = _full(q, k, v)  # outside the block that refuses the package's attention
    with refusing([mt.tiled_attention, mt.scaled_dot_product_attention] + library_softmaxes(), online_attention,
                  RULE, modules=LIBRARIES):
        result = call(online_attention, "online_attention", q, k, v, block_size)
    got = to_numpy(result, f"online_attention({what})")
    if got.shape != expected.shape:
        raise AssertionError(f"online_attention({what}) has shape {got.shape}; it should have (..., T, d_v) = "
                             f"{expected.shape}.")
    if np.all(np.isfinite(got)) and not like(got, expected, atol=atol):
        for wrong in (_tiled(q, k, v, block_size, rescale_values=False), _tiled(q, k, v, block_size, False, False),
                      _tiled(q, k, v, block_size, rescale_sum=False)):
            if like(got, wrong, atol=atol):
                raise AssertionError(f"online_attention({what}) still computes what a wrong version "
                                     "of the tiled loop computes, not softmax(q k^T / sqrt(d_k)) v.")
    close(got, expected, f"online_attention({what}), against softmax(q k^T / sqrt(d_k)) v", atol=atol,
          hint="Follow each query's running maximum, sum and weighted values through the tiles.")


@test_case(points=1)
def several_tiles(online_attention):
    rng = np.random.default_rng(1340)
    q = (2 * rng.normal(size=(2, 3, 6, 4))).astype("float32")  # (B, h, T, d_k)
    k, v = (rng.normal(size=(2, 3, 10, 4)).astype("float32") for _ in range(2))
    _check(online_attention, q, k, v, 4, "(2, 3, 6, 4) queries, 10 keys, tiles of 4, 4 and 2")


@test_case(points=1)
def one_query_per_sequence(online_attention):
    rng = np.random.default_rng(1341)
    q = rng.normal(size=(3, 1, 1, 8)).astype("float32")  # one query per sequence
    k, v = (rng.normal(size=(3, 1, 8, 8)).astype("float32") for _ in range(2))
    k[:, :, -1] = 3 * q[:, :, 0]
    _check(online_attention, q, k, v, 3, "(3, 1, 1, 8) queries, 8 keys, tiles of 3, 3 and 2")
