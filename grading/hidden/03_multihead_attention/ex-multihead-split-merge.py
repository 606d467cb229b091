"""Hidden case of ex-multihead-split-merge: other shapes (T = h, d_k = 5, one position, eight heads).

Merged after the public check (mt.exercises.merged_source): _tensor, _fold, _unfold and _student are its.
"""

from otter.test_files import test_case

from mintransformer.exercises.checking import close

HIDDEN_CASES = [((3, 4, 16), 4), ((4, 3, 15), 3), ((2, 1, 40), 8), ((1, 6, 10), 2)]


@test_case(points=1, hidden=True)
def hidden_fold_and_unfold_other_shapes(fold_heads, unfold_heads):
    for seed, (shape, h) in enumerate(HIDDEN_CASES, start=50):
        x = _tensor(seed, shape)  # noqa: F821 (the public check's)
        expected = _fold(x, h)  # noqa: F821
        folded = _student(fold_heads, "fold_heads", x, h)  # noqa: F821
        close(folded, expected, f"Hidden case: fold_heads(x, {h}) for x of shape {shape}", atol=1e-6,
              hint="Row b h + i must hold head i of sequence b: features [i d_k, (i + 1) d_k) of each position.")
        y = _tensor(seed + 10, expected.shape)  # noqa: F821
        unfolded = _unfold(y, h)  # noqa: F821
        got = _student(unfold_heads, "unfold_heads", y, h)  # noqa: F821
        close(got, unfolded, f"Hidden case: unfold_heads(x, {h}) for x of shape {expected.shape}", atol=1e-6,
              hint="unfold_heads must be the exact inverse of fold_heads.")
