"""Chapter 8, training: per-student numbers."""

from mintransformer.exercises.per_student import exercise


@exercise("ex-training-base-schedule", book={"d_model": 512, "warmup_steps": 4000, "train_steps": 100_000})
def _(draw):
    # A model width and a warm-up of the sizes in use, and a run long enough to end well past the warm-up
    # (at least ten times it), so that the last rate is on the step^-0.5 side of the min, as in the paper.
    while True:
        d_model = draw.choice((256, 384, 512, 640, 768, 1024))
        warmup_steps = draw.choice((2000, 2500, 3000, 4000, 5000, 6000, 8000))
        train_steps = draw.choice((50_000, 60_000, 80_000, 100_000, 150_000, 200_000, 300_000))
        if train_steps >= 10 * warmup_steps:
            return {"d_model": d_model, "warmup_steps": warmup_steps, "train_steps": train_steps}
