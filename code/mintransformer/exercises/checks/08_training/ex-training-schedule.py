"""Exercise: the paper's learning-rate schedule (equation 3), written from its equation."""

import numpy as np
from otter.test_files import test_case

import mintransformer as mt
from mintransformer.exercises.checking import call, close, like, refusing, to_numpy

OK_FORMAT = False
name = "ex-training-schedule"
points = 3

RULE = ("`my_schedule` calls mt.TransformerSchedule: write the rate from the equation yourself (NumPy, math or "
        "keras.ops), as the exercise asks.")


def _reference(d_model, warmup, steps):
    schedule = mt.TransformerSchedule(d_model, warmup)
    return np.array([float(schedule(s)) for s in steps])


def _values(my_schedule, d_model, warmup, steps):
    values = []
    for step in steps:
        with refusing([mt.TransformerSchedule], my_schedule, RULE):  # the expected rates are computed outside
            result = call(my_schedule, "my_schedule", step, d_model, warmup)
        value = to_numpy(result, "my_schedule's result")
        if value.size != 1:
            raise AssertionError(f"my_schedule({step}, {d_model}, {warmup}) must be one number; it has shape {value.shape}.")
        values.append(float(value.reshape(())))
    return np.array(values)


def _wrong_forms(d_model, warmup, steps):
    """Known wrong schedules at steps >= 1, with what to tell the student."""
    s = np.asarray(steps, dtype="float64")
    right = d_model**-0.5 * np.minimum(s**-0.5, s * warmup**-1.5)
    return [
        (right * np.sqrt(d_model),
         "Your rates are sqrt(d_model) times too large: the factor d_model^-0.5 in front of the min is missing."),
        (right * np.sqrt(d_model / 512),
         f"You use 512^-0.5 whatever the model's width (here d_model = {d_model}), the way the MinTransformer "
         "course chapter multiplies by sqrt(512) with d_model 128: take d_model from the argument."),
        (d_model**-0.5 * s**-0.5,
         "Your rate decays from the first step: there is no warm-up (or you take the max of the two terms). "
         "While step < warmup_steps the min picks step * warmup_steps^-1.5, a line through 0 that meets "
         "step^-0.5 at step = warmup_steps."),
        (d_model**-0.5 * np.maximum(s**-0.5, s * warmup**-1.5),
         "You take the max of the two terms: the paper takes the min, so the rate grows during the warm-up "
         "and decays after it (with max it is large at both ends)."),
        (d_model**-0.5 * np.minimum(s**-0.5, s * warmup**-0.5),
         "The warm-up term is step * warmup_steps^-1.5; with warmup_steps^-0.5 the line is too steep and "
         "the warm-up ends almost at once."),
        (d_model**-0.5 * np.minimum((s + 1) ** -0.5, (s + 1) * warmup**-1.5),
         "Your schedule is shifted by one step: you evaluate it at step + 1. That is the other faithful "
         "convention (the paper counts steps from 1), but the exercise asks for the package's: read step 0 as "
         "step 1 and every other step as itself, as mt.TransformerSchedule does (e.g. max(step, 1))."),
    ]


def _check(my_schedule, d_model, warmup, steps, case):
    got = _values(my_schedule, d_model, warmup, steps)
    expected = _reference(d_model, warmup, steps)
    for wrong, message in _wrong_forms(d_model, warmup, steps):
        # atol=0: the rates themselves are about 1e-5 to 1e-3, as small as like()'s default atol.
        if like(got, wrong, atol=0, rtol=1e-4) and not like(expected, wrong, atol=0, rtol=1e-4):
            raise AssertionError(f"{case}: {message}")
    close(got, expected, f"{case}: your rates at steps {list(steps)}", atol=0, rtol=1e-4,
          hint="lrate = d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5).")


@test_case(points=1)
def step_zero(my_schedule):
    for d_model, warmup in [(64, 400), (512, 4000)]:
        value = _values(my_schedule, d_model, warmup, [0])[0]
        expected = _reference(d_model, warmup, [1])[0]
        if not np.isfinite(value):
            raise AssertionError(
                f"my_schedule(0, {d_model}, {warmup}) is {value}: step^-0.5 divides by zero at step 0. "
                "Keras calls the schedule with step 0 first: treat step 0 as step 1.")
        if value == 0:
            raise AssertionError(
                f"my_schedule(0, {d_model}, {warmup}) is 0, so the first update would be wasted (the bug of "
                "the TensorFlow tutorial's CustomSchedule): Keras counts steps from 0, the paper from 1. "
                "Treat step 0 as step 1.")
        close(value, expected, f"my_schedule(0, {d_model}, {warmup})", atol=0, rtol=1e-4,
              hint="Step 0 should give the rate of step 1, d_model^-0.5 * warmup_steps^-1.5.")


@test_case(points=1)
def warm_up(my_schedule):
    _check(my_schedule, 64, 400, [1, 2, 3, 10, 100, 250, 399, 400], "During the warm-up (d_model 64, warm-up 400)")
    _check(my_schedule, 128, 3000, [1, 7, 1000, 2999, 3000], "During the warm-up (d_model 128, warm-up 3000)")


@test_case(points=1)
def decay(my_schedule):
    _check(my_schedule, 64, 400, [400, 401, 800, 1600, 10_000, 100_000], "After the warm-up (d_model 64, warm-up 400)")
    _check(my_schedule, 512, 4000, [4000, 16_000, 100_000], "After the warm-up (d_model 512, warm-up 4000)")
