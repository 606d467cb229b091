"""Hidden case of ex-model-heads-free: widths, heads and key widths the public check does not use.

Merged after the public check (mt.exercises.merged_source), so its helpers (_built, _student, _side)
are in scope.
"""

import keras
from otter.test_files import test_case

import mintransformer as mt


@test_case(points=1, hidden=True)
def hidden_other_layers(package_mha_params, keras_mha_params):
    for d_model, num_heads in [(36, 6), (10, 10), (64, 2)]:
        expected = _built(mt.MultiHeadAttention(d_model, num_heads), d_model, 3)  # noqa: F821 (the public check's)
        got = _student(package_mha_params, "package_mha_params", d_model, num_heads)  # noqa: F821
        if abs(got - expected) > 0.5:
            raise AssertionError(
                f"Hidden case: package_mha_params({d_model}, {num_heads}) returns {got:,.0f}, "
                f"{_side(got, expected)} for mt.MultiHeadAttention({d_model}, {num_heads}).")  # noqa: F821
    for d_model, num_heads, key_dim in [(36, 6, 5), (10, 3, 10), (20, 1, 7)]:
        layer = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=key_dim)
        expected = _built(layer, d_model, 2)  # noqa: F821
        got = _student(keras_mha_params, "keras_mha_params", d_model, num_heads, key_dim)  # noqa: F821
        if abs(got - expected) > 0.5:
            raise AssertionError(
                f"Hidden case: keras_mha_params({d_model}, {num_heads}, {key_dim}) returns {got:,.0f}, "
                f"{_side(got, expected)} for keras.layers.MultiHeadAttention(num_heads={num_heads}, "  # noqa: F821
                f"key_dim={key_dim}) on inputs of width {d_model}.")
