"""What an exercise's public check (the file that ships in the package) holds and does.

For the exercise tests of the hidden cases (grading/hidden/): a value moved out of a public check
must appear nowhere in it, neither in its text nor among its module's values; and an answer tuned to
the public cases must pass the public check and fail the merged one.
"""

import inspect
import pathlib

import numpy as np

import mintransformer as mt
from exercise_messages import assert_hides

ROOT = pathlib.Path(__file__).resolve().parents[1]


def hidden_path(chapter, label):
    """The hidden cases of one exercise, grading/hidden/<chapter>/<label>.py (which must exist)."""
    path = ROOT / "grading" / "hidden" / chapter / f"{label}.py"
    assert path.is_file(), path
    return path


def public_and_merged(chapter, label, **env):
    """(public result, merged result): the student's check in Colab, and the instructor's grading."""
    env.setdefault("STUDENT_ID", "")  # the book's numbers, for the exercises that have per-student ones
    public = mt.exercises.run_check(chapter, label, env)
    merged = mt.exercises.run_check(chapter, label, env, hidden=hidden_path(chapter, label))
    return public, merged


def assert_tuned_answer_caught(chapter, label, **env):
    """An answer tuned to the public cases passes them, and the hidden cases catch it."""
    public, merged = public_and_merged(chapter, label, **env)
    assert public.passed_all, public.summary()
    assert not merged.passed_all, merged.summary()  # the public cases pass: a hidden one failed


def _values(chapter, label):
    """The public check's module values, and what each of its functions of no argument returns."""
    path = mt.exercises.check_path(chapter, label)
    namespace = {"__name__": "public_check"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    values = [v for k, v in namespace.items() if not k.startswith("__")]
    for value in list(values):
        if inspect.isfunction(value) and value.__module__ == "public_check" and not any(
                p.default is p.empty for p in inspect.signature(value).parameters.values()):
            try:
                values.append(value())
            except Exception:  # a helper that needs its arguments: it computes nothing alone
                pass
    return values


def _equal(value, answer):
    if isinstance(answer, dict):
        return isinstance(value, dict) and value == answer
    try:
        a, v = np.asarray(answer, dtype="float64"), np.asarray(value, dtype="float64")
    except (TypeError, ValueError):
        return False
    return a.shape == v.shape and np.allclose(a, v, rtol=1e-4, atol=1e-6)


def assert_public_check_hides(chapter, label, *answers, spelled=()):
    """Neither the text of the public check (in any printed form, or as ``spelled``) nor its module's
    values (nor what its functions of no argument return) hold one of the ``answers``."""
    text = mt.exercises.check_path(chapter, label).read_text()
    assert_hides(text, *answers)
    for words in spelled:
        assert words not in text, words
    for answer in answers:
        found = [v for v in _values(chapter, label) if _equal(v, answer)]
        assert not found, f"the public check of {label} holds the answer {answer!r}"
