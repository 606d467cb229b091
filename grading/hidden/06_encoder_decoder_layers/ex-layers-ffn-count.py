"""Hidden case of ex-layers-ffn-count: sizes the public check does not use.

Merged after the public check (mt.exercises.merged_source), so its helpers (_check_ffn,
_check_decoder_layer) are in scope.
"""

from otter.test_files import test_case

# (d_model, num_heads, dff): BERT-base's widths, an FFN narrower than the model, and a tiny layer.
HIDDEN_SIZES = [(768, 12, 3072), (10, 5, 6), (2, 1, 3)]


@test_case(points=1, hidden=True)
def hidden_other_sizes(ffn_params, decoder_layer_params):
    _check_ffn(ffn_params, HIDDEN_SIZES)  # noqa: F821 (the public check's)
    _check_decoder_layer(decoder_layer_params, HIDDEN_SIZES)  # noqa: F821
