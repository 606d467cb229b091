"""One Keras-native contract, checked for every layer (after keras-hub's ``run_layer_test``).

``run_layer_contract`` checks that a layer

0. is registered for serialization as ``mintransformer>ClassName``;
1. is recreated by ``from_config(get_config())`` with the same, JSON-serializable config;
2. runs on symbolic ``keras.Input``s whose sequence length is unknown, giving an output
   whose batch and length are unknown too;
3. has the expected number of weight tensors (and of parameters, when given), all trainable;
4. wrapped in a functional model, survives ``model.save(... .keras)`` +
   ``keras.saving.load_model`` with IDENTICAL outputs and the same weights.
"""

import json
from dataclasses import dataclass

import keras
import numpy as np
from keras import ops


@dataclass(frozen=True)
class Features:
    """A float input (B, length, width) whose length is unknown to the symbolic model."""

    width: int
    length: int  # the concrete length used for the eager data

    def symbolic(self):
        return keras.Input((None, self.width), dtype="float32")

    def data(self, rng, batch):
        return rng.normal(size=(batch, self.length, self.width)).astype("float32")


@dataclass(frozen=True)
class Tokens:
    """An integer input (B, length) of ids in [0, vocab_size), id 0 being padding."""

    vocab_size: int
    length: int

    def symbolic(self):
        return keras.Input((None,), dtype="int32")

    def data(self, rng, batch):
        tokens = rng.integers(1, self.vocab_size, size=(batch, self.length)).astype("int32")
        tokens[0, -2:] = 0  # some padding, so the masks have something to do
        return tokens


def _flat(outputs):
    return [ops.convert_to_numpy(o) for o in keras.tree.flatten(outputs)]


def run_layer_contract(layer_factory, call_args_fn, *, inputs, tmp_path,
                       expected_num_weights, expected_num_params=None,
                       expected_output_last_dim=None, output_input=0, batch=2, seed=0):
    """Check the Keras layer contract of the layer that ``layer_factory()`` returns.

    Args:
        layer_factory: zero-argument callable returning a fresh, unbuilt layer.
        call_args_fn: ``call_args_fn(layer, tensors)`` calls the layer on the list of input
            tensors (symbolic or eager) in its own way and returns its output.
        inputs: list of ``Features`` / ``Tokens`` describing each input.
        tmp_path: pytest's ``tmp_path``, where the ``.keras`` file is written.
        expected_num_weights: number of weight tensors once built.
        expected_num_params: optional total number of parameters.
        expected_output_last_dim: optional last dimension of the output.
        output_input: index of the input whose length the output has (the target's for
            ``MinTransformer``).
        batch: batch size of the eager data.

    Returns:
        The functional model wrapping the layer (already checked).
    """
    layer = layer_factory()
    cls = type(layer)
    rng = np.random.default_rng(seed)

    # 0. Registered under the package's name.
    name = f"mintransformer>{cls.__name__}"
    assert keras.saving.get_registered_object(name) is cls, f"{name} is not registered"
    assert keras.saving.get_registered_name(cls) == name

    # 1. Config round trip, before and after building.
    config = layer.get_config()
    json.dumps(config)  # plain Python values only
    clone = cls.from_config(config)
    assert type(clone) is cls
    assert clone.get_config() == config

    # 2. Symbolic inputs with unknown sequence length.
    symbolic = [spec.symbolic() for spec in inputs]
    output = call_args_fn(layer, symbolic)
    main = keras.tree.flatten(output)[0]
    assert main.shape[0] is None, f"batch should be unknown, got {main.shape}"
    assert main.shape[1] is None, f"length should be unknown, got {main.shape}"
    if expected_output_last_dim is not None:
        assert main.shape[-1] == expected_output_last_dim, main.shape
    assert cls.from_config(layer.get_config()).get_config() == layer.get_config()

    # 3. Weight count (all trainable: nothing here keeps running statistics).
    assert len(layer.weights) == expected_num_weights, [w.path for w in layer.weights]
    assert len(layer.non_trainable_weights) == 0
    if expected_num_params is not None:
        assert layer.count_params() == expected_num_params

    # 4. Functional model, save and load: identical outputs and weights.
    model = keras.Model(symbolic, output)
    data = [spec.data(rng, batch) for spec in inputs]
    expected = _flat(model(data, training=False))
    main_out = expected[0]
    assert main_out.shape[:2] == (batch, inputs[output_input].length)
    assert np.all(np.isfinite(main_out))
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert len(loaded.weights) == len(model.weights)
    for w_saved, w_loaded in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(w_saved, w_loaded)
    got = _flat(loaded(data, training=False))
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)
    inner = [sub for sub in loaded.layers if type(sub) is cls]
    assert len(inner) == 1 and inner[0].get_config() == layer.get_config()
    return model
