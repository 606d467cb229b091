"""Hidden case of ex-multihead-sum: another layer, d_model = 24 with h = 3 heads (d_k = 8), T = 6 queries.

Merged after the public check (mt.exercises.merged_source): _compare and _layer are its.
"""

from keras import ops
from otter.test_files import test_case

from mintransformer.exercises.checking import close


@test_case(points=1, hidden=True)
def hidden_another_layer(head_terms):
    got, layer, inputs = _compare(head_terms, 7, d_model=24, num_heads=3, T=6)  # noqa: F821 (the public check's)
    total = got.sum(axis=0) + ops.convert_to_numpy(layer.wo.bias)
    expected = ops.convert_to_numpy(layer(*inputs))
    close(total, expected, "Hidden case, d_model = 24, h = 3: the sum of your terms + b^O", atol=1e-5)
