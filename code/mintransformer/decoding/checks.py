"""Clear errors instead of silent wrong answers: lengths past the model's positions.

A source longer than the model's ``max_length`` has positions that the positional table does
not cover. Eagerly, or wherever the length is known when the loop is built, that is a
``ValueError``. In a graph whose source length is only known at run time, the check is an
assertion that fails at run time (``tf.errors.InvalidArgumentError``). Under XLA
(``jit_compile=True``) no check can fail at run time, XLA drops assertions, and a position past
the table is embedded as NaN, which spreads to every logit, and an argmax turns NaN logits back
into valid token ids: there a source of unknown length is refused when the loop is built.
Check it in a caller that is not compiled (as ``greedy_decode`` does in Python, and chapter 9's
SavedModel in its ``__call__``), then give the compiled loop a source of fixed length.
"""

import numpy as np
import tensorflow as tf
from tensorflow.python.ops import control_flow_util  # no public API says "being traced for XLA"

from ..gpt import MinGPT


def as_length(value, name):
    """A count given as a Python int, a NumPy integer or an eager integer tensor, as a Python int.

    The loops build buffers of this length, so it must be known when they are built: a
    symbolic tensor (inside a ``tf.function``) is refused with a ``TypeError``.
    """
    if tf.is_tensor(value):
        try:
            value = value.numpy()
        except (AttributeError, NotImplementedError):
            raise TypeError(f"{name} must be known when the decoding loop is built (a Python int, a NumPy "
                            "integer or an eager tensor), not a symbolic tensor: it fixes the loop's shapes.") from None
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}.")
    return int(value)


def in_xla():
    """Whether the graph being built is compiled by XLA (a ``tf.function`` with ``jit_compile=True``)."""
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


def check_lengths(model, source, max_length):
    """``(source, max_length)`` after checking that they fit the model's positions.

    ``max_length``, the most tokens to generate, is returned as a Python int. For a
    ``MinTransformer``, the source (B, S) must have ``S <= model.max_length`` and so must
    ``max_length``; for a ``MinGPT``, the prompt (B, P) and all generated tokens but the last,
    ``P + max_length - 1``. Raises ``ValueError`` when the lengths are known (eagerly, or a static
    shape in a graph); with a source length known only at run time, the returned source carries
    an assertion that raises ``tf.errors.InvalidArgumentError`` at run time, on every call; under
    XLA, which cannot raise at run time, such a source is refused now (see the module's docstring).
    """
    max_length = as_length(max_length, "max_length")
    length = source.shape[1]
    if isinstance(model, MinGPT):
        if length is None:
            raise ValueError("a prompt's length must be known when the loop is built (a static shape (B, P)).")
        if length + max_length - 1 > model.max_length:  # the last new token is never fed
            raise ValueError(f"a prompt of {length} tokens and max_length={max_length} do not fit the context, "
                             f"max_length={model.max_length}: the model would read {length + max_length - 1} tokens.")
        return source, max_length
    if max_length > model.max_length:
        raise ValueError(f"max_length={max_length} exceeds the model's max_length={model.max_length}: "
                         "the decoder has no position for the later tokens.")
    if length is not None:
        if length > model.max_length:
            raise ValueError(f"a source of {length} tokens is longer than the model's max_length="
                             f"{model.max_length}: its positional table has no row for the later positions.")
        return source, max_length
    if in_xla():
        raise ValueError(
            f"the source's length is unknown while XLA compiles the loop, and XLA cannot raise at run time: a "
            f"source longer than max_length={model.max_length} would be decoded wrongly, without an error. "
            "Check the length in a caller that is not compiled (mt.decoding.check_lengths in a tf.function "
            "without jit_compile, or in Python) and pad the source to a fixed length, or give the compiled "
            "function an input_signature with a fixed source length.")
    check = tf.debugging.assert_less_equal(
        tf.shape(source)[1], model.max_length,
        message=f"the source is longer than max_length={model.max_length} of the model: its positional table "
                "has no row for the later positions")
    with tf.control_dependencies([check]):
        return tf.identity(source), max_length


def fixed_length_source(model, source):
    """``source`` (B, S) checked as in ``check_lengths`` and padded to (B, ``model.max_length``).

    For a function that calls a loop compiled by XLA: call this in the caller, which is not
    compiled, so that a long source raises on every call; the compiled loop then sees one source
    length, which XLA can check when it builds the loop, and compiles once per batch size
    instead of once per batch size and source length.
    """
    source, _ = check_lengths(model, source, 1)
    padded = tf.pad(source, [[0, 0], [0, model.max_length - tf.shape(source)[1]]], constant_values=model.pad_id)
    return tf.ensure_shape(padded, [None, model.max_length])
