"""The checks of the book's exercises: one otter-grader test file per exercise.

Each chapter's checks live in ``checks/<chapter>/``, one file per exercise, named by the
exercise's label (``ex-attention-by-hand.py``). The same files serve the student in Colab
(``grader.check("ex-attention-by-hand")``) and the instructor who grades a folder of submissions
(``scripts/grade.py``, which hands them to otter-grader).

    grader = mt.exercises.grader("02_attention")
    grader.check("ex-attention-by-hand")

``grader`` needs otter-grader, the package's ``exercises`` extra:
``pip install "mintransformer[exercises]"``.

Exercises whose answer is a number to work out give each student their own numbers, drawn from
the notebook's ``STUDENT_ID`` (``per_student/``); with no id they are the book's:

    numbers = mt.exercises.parameters("ex-attention-by-hand", STUDENT_ID)
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


def parameters(label, student_id=""):
    """The numbers of exercise ``label`` for ``student_id`` (a dict): the book's when the id is ""."""
    from mintransformer.exercises import per_student

    return per_student.parameters(label, student_id)


def check_path(chapter, label):
    """The path of one exercise's check file (its public test cases)."""
    path = pathlib.Path(tests_dir(chapter)) / f"{label}.py"
    if not path.is_file():
        raise ValueError(f"no check {label!r} for {chapter}; its checks: {labels(chapter)}")
    return path


def merged_source(chapter, label, hidden=None):
    """The source of an exercise's check, with the hidden test cases of the file ``hidden`` added.

    Hidden test cases are not in the package: an instructor keeps them (the book's are in its
    repository, ``grading/hidden/<chapter>/<label>.py``) and scripts/grade.py adds them when it
    grades. A hidden file holds test-case functions only, each ``@test_case(points=..., hidden=True)``
    with names of its own; the merged check's points are the sum of all its cases.
    """
    source = check_path(chapter, label).read_text()
    if hidden is None:
        return source
    import ast

    extra = pathlib.Path(hidden).read_text()

    def cases(text):
        return {node.name: node for node in ast.parse(text).body
                if isinstance(node, ast.FunctionDef) and node.decorator_list}

    public, secret = cases(source), cases(extra)
    clash = sorted(set(public) & set(secret))
    if clash:
        raise ValueError(f"{hidden}: test cases named as in the public check: {clash}")
    for name, node in secret.items():
        keywords = {k.arg: k.value for d in node.decorator_list if isinstance(d, ast.Call)
                    for k in d.keywords}
        if not (isinstance(keywords.get("hidden"), ast.Constant) and keywords["hidden"].value is True
                and isinstance(keywords.get("points"), ast.Constant)):
            raise ValueError(f"{hidden}: {name} must be @test_case(points=..., hidden=True)")
    # Every case names its points: the file's total is left to otter to sum.
    return f"{source.rstrip()}\n\n\n# Hidden test cases, from {pathlib.Path(hidden).name}\n\n{extra.rstrip()}\n\npoints = None\n"


def _check_file(chapter, label, hidden=None):
    from otter.test_files import ExceptionTestFile

    path = check_path(chapter, label)
    if hidden is None:
        return ExceptionTestFile.from_file(str(path))
    return ExceptionTestFile.from_string(merged_source(chapter, label, hidden), path=str(path))


def points(chapter, label, hidden=None):
    """The points an exercise is worth: the sum of its check's test cases (with ``hidden``'s)."""
    return _check_file(chapter, label, hidden).possible


def run_check(chapter, label, env, hidden=None):
    """Run one exercise's check against ``env`` (a dict of the student's names).

    Returns otter's result: ``.passed_all``, ``.score``, and ``.summary()``, the text that
    ``grader.check`` shows. The tests use it to make sure that each check rejects the known wrong
    answers with the message it should. ``hidden``: a file of hidden test cases to add
    (``merged_source``).
    """
    result = _check_file(chapter, label, hidden)
    result.run(dict(env))
    return result
