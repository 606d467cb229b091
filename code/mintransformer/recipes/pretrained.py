"""The date model that chapter 9 loads, shipped inside the package so that it reaches Colab too."""

import importlib.resources

import numpy as np

from .tasks import build_model, task_data

PRETRAINED_DATE_WEIGHTS = "date_model.weights.h5"


def load_pretrained_date_model():
    """The date model trained by ``scripts/train_date_model.py``: (model, tokenizer)."""
    tokenizer, _ = task_data("dates")
    model = build_model("dates", tokenizer)
    model((np.ones((1, 4), "int32"), np.ones((1, 4), "int32")))
    path = importlib.resources.files("mintransformer") / "pretrained" / PRETRAINED_DATE_WEIGHTS
    with importlib.resources.as_file(path) as file:
        model.load_weights(file)
    return model, tokenizer
