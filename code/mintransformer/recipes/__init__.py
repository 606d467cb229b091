"""Recipes for the two generated tasks, one module per concern.

- ``tasks``: the tasks' data and model sizes (``TASKS``, ``task_data``, ``build_model``);
- ``optimizer``: the paper's training set-up (``compile_model``);
- ``checkpoints``: checkpoint averaging (``average_checkpoints``);
- ``evaluation``: decoding strings and scoring them (``translate``, ``exact_match``);
- ``pretrained``: the shipped date model (``load_pretrained_date_model``);
- ``ablations``: chapter 11's experiments (``ablations.run``, ``ablations.load_results``);
- ``addition``: chapter 12's language model, addition written as text (``addition.train``, ...);
- ``modern``: chapter 13's comparison of the 2017 block and the modern one (``modern.run``, ...);
- ``distributed``: appendix A's training under a ``tf.distribute`` strategy (``distributed.train``).

Chapter 8 trains with these; chapter 9 loads the date model trained by
``scripts/train_date_model.py``. Every name is also here, as ``recipes.build_model``, ...
"""

from . import ablations, addition, distributed, modern
from .checkpoints import average_checkpoints
from .evaluation import exact_match, translate
from .optimizer import compile_model
from .pretrained import PRETRAINED_DATE_WEIGHTS, load_pretrained_date_model
from .tasks import TASKS, build_model, task_data

__all__ = ["ablations", "addition", "distributed", "modern",
           "TASKS", "task_data", "build_model", "compile_model", "average_checkpoints", "translate",
           "exact_match", "PRETRAINED_DATE_WEIGHTS", "load_pretrained_date_model"]
