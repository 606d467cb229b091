"""Hidden case of ex-mathematics-fix-sum-index: other shapes (one key, many queries, d_k = 32).

Merged after the public check (mt.exercises.merged_source): _random and _check are its.
"""

from otter.test_files import test_case


@test_case(points=1, hidden=True)
def hidden_other_shapes(fixed_attention):
    for seed, (T, S, d_k, d_v) in enumerate([(9, 1, 3, 2), (4, 11, 32, 5)], start=40):
        Q, K, V = _random(seed, T, S, d_k, d_v)  # noqa: F821 (the public check's)
        case = f"Hidden case, {T} queries over {S} key(s), d_k = {d_k}"
        _check(fixed_attention, Q, K, V, case, atol=1e-5)  # noqa: F821
