"""Checkpoint averaging (paper section 6.1)."""

import keras


def average_checkpoints(model, paths):
    """Set ``model``'s trainable weights to the mean of the checkpoints in ``paths``.

    The files are those of ``keras.callbacks.ModelCheckpoint``: ``.weights.h5`` files
    (``save_weights_only=True``) or complete ``.keras`` archives, whose weights ``load_weights``
    reads as well.
    The paper's base models average the last 5 checkpoints (section 6.1): the mean of several
    points along the noisy end of training lies closer to a minimum than any one of them.
    Non-trainable state (dropout seeds) is left as in the last file.

    Returns:
        ``model``, averaged in place.
    """
    total = None
    for path in paths:
        model.load_weights(path)
        values = [keras.ops.convert_to_numpy(v) for v in model.trainable_variables]
        total = values if total is None else [t + v for t, v in zip(total, values)]
    for variable, value in zip(model.trainable_variables, total):
        variable.assign(value / len(paths))
    return model
