"""mintransformer: the Transformer of "Attention Is All You Need" in Keras 3, one concept per module."""

import os
import warnings

from ._quiet import quiet_stderr

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow: errors only
# Keras 3.13 (Colab) probes ``hasattr(np, "object")``, which makes NumPy 2 warn on every import.
warnings.filterwarnings("ignore", message="In the future `np.object` will be defined", category=FutureWarning)
with quiet_stderr():
    import keras  # noqa: F401  (imports TensorFlow, which logs its start-up to fd 2)
    import tensorflow as _tf

    from .distribute import _split_cpu_from_environment

    _split_cpu_from_environment()  # MINTRANSFORMER_CPU_DEVICES=2: two logical CPUs (appendix A)
    _tf.constant(0.0)  # start the eager runtime now, while its log lines are discarded

from .attention import MASK_FILL_VALUE, scaled_dot_product_attention, tiled_attention
from .decoder import Decoder, DecoderLayer
from . import decoding
from .decoding import (beam_search, beam_tokens, decode_tokens, greedy_decode, greedy_generate, greedy_tokens,
                       length_penalty, sample_decode, sample_generate)
from .encoder import Encoder, EncoderLayer
from .feedforward import FeedForward
from .gpt import LLAMA_STYLE, MinGPT, parameter_count
from .layernorm import LayerNormalization, RMSNormalization
from .masks import attends_causally, causal_mask, decoder_self_mask, merge_padding, padding_mask
from .model import MinTransformer
from .multihead import MultiHeadAttention, merge_heads, split_heads
from .positional import PositionalEmbedding, positional_encoding
from .rotary import apply_rotary, interleaved_to_half
from .source import show_source
from .sublayer import residual
from .training import (MaskedAccuracy, MaskedLoss, StepLossHistory, TransformerSchedule, masked_accuracy,
                       masked_loss)

# Submodules: mt.plotting, mt.distribute, ...
from . import data, diagrams, distribute, exercises, plotting, recipes, rotary, stats  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "MASK_FILL_VALUE", "scaled_dot_product_attention", "split_heads", "merge_heads",
    "MultiHeadAttention", "positional_encoding", "PositionalEmbedding", "LayerNormalization",
    "FeedForward", "EncoderLayer", "DecoderLayer", "Encoder", "Decoder", "MinTransformer",
    "padding_mask", "causal_mask", "decoder_self_mask", "attends_causally", "merge_padding",
    "residual", "TransformerSchedule", "masked_loss",
    "masked_accuracy", "MaskedAccuracy", "MaskedLoss", "show_source", "greedy_decode", "beam_search",
    "sample_decode", "decode_tokens", "greedy_tokens", "beam_tokens", "MinGPT", "greedy_generate",
    "sample_generate",
    "length_penalty", "quiet_stderr", "StepLossHistory",
    "RMSNormalization", "apply_rotary", "interleaved_to_half", "tiled_attention", "LLAMA_STYLE",
    "parameter_count",
]
