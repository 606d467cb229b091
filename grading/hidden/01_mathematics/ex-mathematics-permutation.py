"""Hidden case of ex-mathematics-permutation: another sentence, of 8 tokens, with d_v = 2.

Merged after the public check (mt.exercises.merged_source): _attention is its.
"""

import numpy as np
from otter.test_files import test_case

from mintransformer.exercises.checking import call, close, pair


@test_case(points=1, hidden=True)
def hidden_another_sentence(predict_reversed):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(8, 6)).astype("float32")
    W_Q, W_K, W_V = (rng.normal(size=(6, d)).astype("float32") for d in (4, 4, 2))
    out, A = _attention(X, W_Q, W_K, W_V)  # noqa: F821 (the public check's)
    out_rev, A_rev = _attention(X[::-1].copy(), W_Q, W_K, W_V)  # noqa: F821
    result = call(predict_reversed, "predict_reversed", out.copy(), A.copy())
    first, second = pair(result, "predict_reversed", "(output, weights)", item_ndim=2)
    close(first, out_rev, "Hidden case, 8 tokens: the predicted output (T, d_v)", atol=1e-5,
          hint="Permuting the tokens permutes the output rows the same way, whatever the length.")
    close(second, A_rev, "Hidden case, 8 tokens: the predicted weights (T, T)", atol=1e-5,
          hint="Entry (t, s) is the weight of query t on key s: both are reversed, whatever the length.")
