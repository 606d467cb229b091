"""The paper's optimizer, schedule, loss and metric, set on a model (section 5.3-5.4)."""

import keras

from ..training import MaskedAccuracy, MaskedLoss, TransformerSchedule


def compile_model(model, warmup_steps, total_steps=None, cooldown_steps=0, label_smoothing=0.1, warmup=True):
    """The paper's training set-up (section 5.3-5.4): Adam(0.9, 0.98, 1e-9), the warm-up
    schedule, label smoothing 0.1; loss and token accuracy over non-pad tokens. With
    ``cooldown_steps``, the rate is multiplied by a factor that falls linearly from 1 towards 0
    over the last ``cooldown_steps`` of the ``total_steps`` updates (not in the paper; see
    ``TransformerSchedule``). Chapter 11 changes ``label_smoothing`` and turns the ``warmup`` off."""
    schedule = TransformerSchedule(model.d_model, warmup_steps, total_steps, cooldown_steps, warmup)
    optimizer = keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9)
    model.compile(optimizer=optimizer, loss=MaskedLoss(label_smoothing=label_smoothing, pad_id=model.pad_id),
                  metrics=[MaskedAccuracy(pad_id=model.pad_id)])
    return model
