"""The checks of the book's exercises: one otter-grader test file per exercise.

Each chapter's checks live in ``checks/<chapter>/``, one file per exercise, named by the
exercise's label (``ex-attention-by-hand.py``). The same files serve the student in Colab
(``grader.check("ex-attention-by-hand")``) and the instructor who grades a folder of submissions
(``scripts/grade.py``, which hands them to otter-grader).

    grader = mt.exercises.grader("02_attention")
    grader.check("ex-attention-by-hand")

``grader`` needs otter-grader, the package's ``exercises`` extra:
``pip install "mintransformer[exercises]"``.
"""

import pathlib

CHECKS = pathlib.Path(__file__).resolve().parent / "checks"


def chapters():
    """The chapters that have checks, e.g. ``["01_mathematics", "02_attention", ...]``."""
    return sorted(p.name for p in CHECKS.iterdir() if p.is_dir() and not p.name.startswith("_"))


def tests_dir(chapter):
    """The folder of one chapter's check files (an otter-grader tests directory)."""
    path = CHECKS / chapter
    if not path.is_dir():
        raise ValueError(f"no checks for chapter {chapter!r}; chapters with checks: {chapters()}")
    return str(path)


def labels(chapter):
    """The labels of one chapter's auto-checked exercises, in file-name order."""
    return sorted(p.stem for p in pathlib.Path(tests_dir(chapter)).glob("ex-*.py"))


def grader(chapter):
    """An ``otter.Notebook`` that checks this chapter's exercises: ``grader.check(label)``."""
    try:
        import otter
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "The exercises' checks need otter-grader: "
            'pip install "mintransformer[exercises]" (or pip install otter-grader).'
        ) from error
    # The checks compare with the package to about 1e-5. On recent NVIDIA GPUs TensorFlow runs
    # float32 matmuls as TF32 (about 1e-3): keep them exact, so that a right answer passes there too.
    import tensorflow as tf

    tf.config.experimental.enable_tensor_float_32_execution(False)
    return otter.Notebook(tests_dir=tests_dir(chapter))


def _check_file(chapter, label):
    from otter.test_files import ExceptionTestFile

    path = pathlib.Path(tests_dir(chapter)) / f"{label}.py"
    if not path.is_file():
        raise ValueError(f"no check {label!r} for {chapter}; its checks: {labels(chapter)}")
    return ExceptionTestFile.from_file(str(path))


def points(chapter, label):
    """The points an exercise is worth: the sum of its check's test cases."""
    return _check_file(chapter, label).possible


def run_check(chapter, label, env):
    """Run one exercise's check against ``env`` (a dict of the student's names).

    Returns otter's result: ``.passed_all``, ``.score``, and ``.summary()``, the text that
    ``grader.check`` shows. The tests use it to make sure that each check rejects the known wrong
    answers with the message it should.
    """
    result = _check_file(chapter, label)
    result.run(dict(env))
    return result
