"""A term of a course, played end to end on two chapters (instructors.md, in the order it gives).

The instructor writes an assignment (two chapters, points per exercise, parts graded by hand) and
makes the pinned student edition. Three students hand in each chapter (blank, correct, with known
mistakes), each with a student id and written answers; one more submission attacks the grader, one
loops forever, one is the reader's Colab edition. The grader runs each in its sandbox; then the
grades file, the hidden cases' scores, the feedback, the written-answers page, the instructor's
marks, the LMS file and the Gradescope zips are checked.
"""

import csv
import json
import os
import pathlib
import subprocess
import sys
import uuid
import zipfile

import nbformat
import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import editions  # noqa: E402
import grade  # noqa: E402
import sandbox  # noqa: E402

import mintransformer as mt  # noqa: E402

PIN = "v1.0-term-test"
ASSIGNMENT = f"""\
title: Week 2, attention and layer norm
pin: {PIN}
exercises:
  ex-attention-by-hand: {{auto: 2, written: 1}}
  ex-attention-implement: 5
  ex-attention-combine-masks: {{auto: 3, written: 2}}
  ex-layernorm-implement: 4
  ex-layernorm-rmsnorm: {{auto: 3, written: 2}}
"""
CHAPTERS = ("02_attention", "05_layer_norm")
STUDENTS = {"blank": "s001", "correct": "s002", "mistakes": "s003"}
MARKER = uuid.uuid4().hex[:12]  # names what the attacker leaves behind, if anything
SLEEP = "3137"  # the orphan process's sleep, to look for after grading

# CI sets MT_REQUIRE_SANDBOX=1: there a missing sandbox fails the tests instead of skipping them.
pytestmark = pytest.mark.skipif(not sandbox.works()[0] and not os.environ.get("MT_REQUIRE_SANDBOX"),
                                reason="no sandbox here: " + sandbox.works()[1])

HIDDEN_MARK = "hidden_"  # every hidden case's name starts so: none may reach a student

# An attacker's work cells, one submission each (chapter 2, no answer written).
HARM = f'''
import os, pathlib, socket, subprocess, shutil
report = {{}}
# Write outside the folder: into the repository, the submissions, the system's /tmp.
for path in ["{ROOT}/pwned-{MARKER}", "/tmp/pwned-{MARKER}", os.path.expanduser("~/../pwned-{MARKER}")]:
    try:
        pathlib.Path(path).write_text("pwned")
        report[path] = "written"
    except Exception as error:
        report[path] = type(error).__name__
# Delete files: the repository's checks, the other submissions.
for path in ["{ROOT}/code/mintransformer/exercises/checks/02_attention", "SUBMISSIONS"]:
    try:
        shutil.rmtree(path)
        report["deleted " + path] = "deleted"
    except Exception as error:
        report["deleted " + path] = type(error).__name__
# The network.
try:
    socket.create_connection(("pypi.org", 443), timeout=3)
    report["network"] = "open"
except Exception as error:
    report["network"] = type(error).__name__
# A process that would outlive the kernel, in a session of its own.
subprocess.Popen(["sleep", "{SLEEP}"], start_new_session=True)
print(report)
'''

LEAK = f'''
import glob, inspect, pathlib
KEY = "hid" + "den=True"  # (so that this cell's own source, which the kernel's frames hold, does not match)

def my_attention(q, k, v, mask=None, causal=False):
    # Smuggle the hidden cases out in an error message: from the disk, or from the grader's frames.
    found = [pathlib.Path(p).read_text() for p in glob.glob("{ROOT}/grading/hidden/*/*.py")]
    found += [pathlib.Path(p).read_text() for p in glob.glob("**/*.py", recursive=True)
              if KEY in pathlib.Path(p).read_text()]
    for frame in inspect.stack():
        for value in frame.frame.f_locals.values():
            if isinstance(value, str) and KEY in value and value != KEY:
                found.append(value)
            if isinstance(value, dict):
                found += [v for v in value.values() if isinstance(v, str) and KEY in v and v != KEY]
    raise ValueError(" ".join(found) or "nothing found")
'''

PATCH_OTTER = '''
import otter.test_files.abstract_test as abstract
import otter.test_files.exception_test as exception_test
from mintransformer.exercises import checking
exception_test.ExceptionTestFile.run = lambda self, env: setattr(self, "test_case_results", [
    abstract.TestCaseResult(test_case=tc, message="passed", passed=True) for tc in self.test_cases])
checking.close = lambda *args, **kwargs: None
'''

PATCH_NUMPY = '''
import numpy
import mintransformer
numpy.allclose = lambda *args, **kwargs: True
mintransformer.scaled_dot_product_attention = lambda q, k, v, mask=None: (v, v)
'''

PATCH_IMPORTS = '''
import sys, types, importlib.abc, importlib.machinery

class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        return None  # a real attack would serve its own otter here

sys.meta_path.insert(0, Finder())
'''

ATTACKS = {"s661": HARM, "s662": LEAK, "s663": PATCH_OTTER, "s664": PATCH_NUMPY, "s665": PATCH_IMPORTS}


def by_hand_answers(student):
    """ex-attention-by-hand's weights and outputs for this student's numbers, rounded as typed by hand."""
    n = mt.exercises.parameters("ex-attention-by-hand", student)
    q, k, v = (np.array([n[f"{x}_1"], n[f"{x}_2"]], dtype="float64") for x in "qkv")
    e = np.exp(q @ k.T / np.sqrt(q.shape[-1]))
    weights = e / e.sum(axis=-1, keepdims=True)
    return np.round(weights, 4).tolist(), np.round(weights @ v, 4).tolist()


def student_cells_of(nb):
    return [c for c in nb.cells if "exercise-work" in editions.tags(c)]


def write_answers(nb, text):
    """A student's answer in every answer cell, in place of the placeholder line."""
    for cell in nb.cells:
        if "exercise-answer" in editions.tags(cell):
            cell.source = "\n".join(text if line.startswith(grade.PLACEHOLDER) else line
                                    for line in cell.source.splitlines())


def set_id(nb, student):
    for cell in nb.cells:
        if "student-id" in editions.tags(cell):
            cell.source = cell.source.replace('STUDENT_ID = ""', f'STUDENT_ID = "{student}"')
            return
    raise AssertionError("no STUDENT_ID cell")


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    base = tmp_path_factory.mktemp("term")
    course = base / "course"
    course.mkdir()
    (course / "week2.yml").write_text(ASSIGNMENT)
    # The instructor: the pinned student edition of the assignment's chapters, and the key.
    handout = course / "handout"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "student_edition.py"), str(handout),
                    "--assignment", str(course / "week2.yml")], check=True, capture_output=True)
    key = {p.stem: p for p in editions.write("instructor", base / "key", list(CHAPTERS))}
    submissions = base / "submissions"
    submissions.mkdir()
    for chapter in CHAPTERS:
        blank = nbformat.read(handout / f"{chapter}.ipynb", as_version=4)
        set_id(blank, STUDENTS["blank"])
        nbformat.write(blank, submissions / f"{chapter} (1).ipynb")  # Colab's names say nothing

        correct = nbformat.read(key[chapter], as_version=4)  # the solutions, typed in by a student
        correct.metadata["mintransformer"]["edition"] = "student"
        for cell in correct.cells:
            cell.metadata["tags"] = [t for t in editions.tags(cell) if t != "exercise-solution"]
        set_id(correct, STUDENTS["correct"])
        write_answers(correct, "Because the scale is $1/\\sqrt{d_k}$: the weights are $\\frac{e}{e+1}$.")
        nbformat.write(correct, submissions / f"{chapter} (2).ipynb")

        mistakes = nbformat.read(key[chapter], as_version=4)
        mistakes.metadata["mintransformer"]["edition"] = "student"
        for cell in mistakes.cells:
            cell.metadata["tags"] = [t for t in editions.tags(cell) if t != "exercise-solution"]
            if "def my_attention" in cell.source:  # the scale forgotten
                cell.source = cell.source.replace("q / np.sqrt(q.shape[-1])", "q")
            if "weights_by_hand = np.exp(scaled)" in cell.source:  # without the scale
                cell.source = cell.source.replace("scaled = Q @ K.T / np.sqrt(K.shape[-1])", "scaled = Q @ K.T")
            if "def my_layer_norm" in cell.source:  # eps outside the root
                cell.source = cell.source.replace("ops.sqrt(var + eps)", "(ops.sqrt(var) + eps)")
        set_id(mistakes, STUDENTS["mistakes"])
        write_answers(mistakes, "I do not know.")
        nbformat.write(mistakes, submissions / f"{chapter} (3).ipynb")

    # Two students type their by-hand answers in: one worked out their own numbers, one copied the
    # correct student's answers.
    for student, source in (("s006", "s006"), ("s004", STUDENTS["correct"])):
        typed = nbformat.read(handout / "02_attention.ipynb", as_version=4)
        set_id(typed, student)
        weights, outputs = by_hand_answers(source)
        work = student_cells_of(typed)[0]
        assert "weights_by_hand = ..." in work.source
        work.source = (work.source.replace("weights_by_hand = ...", f"weights_by_hand = np.array({weights})")
                       .replace("outputs_by_hand = ...", f"outputs_by_hand = np.array({outputs})"))
        nbformat.write(typed, submissions / f"02_attention-{student}.ipynb")

    for student, code in ATTACKS.items():
        attack = nbformat.read(handout / "02_attention.ipynb", as_version=4)
        set_id(attack, student)
        student_cells_of(attack)[1].source = code.replace("SUBMISSIONS", str(submissions))  # my_attention's
        nbformat.write(attack, submissions / f"02_attention-{student}.ipynb")

    forever = nbformat.read(handout / "05_layer_norm.ipynb", as_version=4)
    set_id(forever, "s404")
    student_cells_of(forever)[0].source = "while True:\n    pass"
    nbformat.write(forever, submissions / "05_layer_norm-loop.ipynb")

    reader = nbformat.read(ROOT / "colab" / "chapters" / "02_attention.ipynb", as_version=4)
    reader.cells.insert(0, nbformat.v4.new_code_cell('STUDENT_ID = "s777"'))
    nbformat.write(reader, submissions / "02_attention-reader.ipynb")

    out = base / "graded"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), "run", str(submissions), str(out),
                          "--assignment", str(course / "week2.yml"), "--timeout", "90", "--jobs", "2"],
                         capture_output=True, text=True, timeout=1500)
    assert run.returncode == 0, run.stderr[-3000:]
    with open(out / "grades.csv") as f:
        rows = {(r["student_id"], r["chapter"]): r for r in csv.DictReader(f)}
    return {"course": course, "handout": handout, "submissions": submissions, "out": out, "rows": rows,
            "log": run.stdout, "assignment": grade.load_assignment(course / "week2.yml")}


def test_the_handout_is_pinned_has_an_id_cell_and_answer_cells(term):
    for chapter in CHAPTERS:
        nb = nbformat.read(term["handout"] / f"{chapter}.ipynb", as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        assert f'/mintransformer@{PIN}"' in text
        assert sum("student-id" in editions.tags(c) for c in nb.cells) == 1
        answers = grade.written_answers(nb)
        assert answers and all(not text for text in answers.values())  # the prompts are not answers
    assert set(term["handout"].glob("*.ipynb")) == {term["handout"] / f"{c}.ipynb" for c in CHAPTERS}


def test_grades_of_the_three_students(term):
    rows, assignment = term["rows"], term["assignment"]
    for chapter in CHAPTERS:
        labels = [label for label, item in assignment["exercises"].items() if item["chapter"] == chapter]
        auto = sum(assignment["exercises"][label]["auto"] for label in labels)
        possible = auto + sum(assignment["exercises"][label]["written"] for label in labels)
        blank, correct, wrong = (rows[(STUDENTS[s], chapter)] for s in ("blank", "correct", "mistakes"))
        for row in (blank, correct, wrong):
            assert not row["error"] and float(row["possible"]) == possible, row
        assert float(blank["auto"]) == 0
        assert float(correct["auto"]) == auto
        assert 0 < float(wrong["auto"]) < auto
        for label in labels:
            if assignment["exercises"][label]["auto"]:
                hidden, of = map(float, correct[f"{label} hidden"].split("/"))
                assert hidden == of > 0, (label, correct)  # every exercise here has hidden cases
    assert float(rows[("s003", "02_attention")]["ex-attention-implement"]) == 0
    assert float(rows[("s003", "02_attention")]["ex-attention-by-hand"]) < 2
    assert float(rows[("s003", "05_layer_norm")]["ex-layernorm-implement"]) < 4
    assert float(rows[("s003", "05_layer_norm")]["ex-layernorm-rmsnorm"]) == 3


def test_each_student_has_numbers_of_their_own(term):
    # ex-attention-by-hand draws each student's queries, keys and values from STUDENT_ID: the answers
    # typed in for one's own numbers earn the points; the correct student's answers, copied, do not.
    rows = term["rows"]
    assert by_hand_answers("s004") != by_hand_answers(STUDENTS["correct"])
    own, copied = rows[("s006", "02_attention")], rows[("s004", "02_attention")]
    assert float(own["ex-attention-by-hand"]) == 2 and own["ex-attention-by-hand hidden"] == "2/2", own
    assert copied["ex-attention-by-hand hidden"] == "0/2", copied
    assert float(copied["ex-attention-by-hand"]) < 2
    # The mistakes student (no scale) is told so: the public case computes from their numbers.
    feedback = (term["out"] / "feedback" / "s003-02_attention.md").read_text()
    assert "without the scale" in feedback, feedback


def test_the_hidden_cases_count(term):
    # The mistakes student's layer norm (eps outside the root) fails hidden cases too.
    row = term["rows"][("s003", "05_layer_norm")]
    hidden, of = map(float, row["ex-layernorm-implement hidden"].split("/"))
    assert of > 0 and hidden < of


def test_the_attacks_change_no_score_and_harm_nothing(term):
    rows = term["rows"]
    for student in ATTACKS:
        assert float(rows[(student, "02_attention")]["auto"]) == 0, rows[(student, "02_attention")]
    # Caught: a process left running, NumPy's and the package's functions replaced, an import hook.
    for student, why in [("s661", "process"), ("s664", "numpy.allclose"), ("s664", "mintransformer."),
                         ("s665", "sys.meta_path")]:
        row = rows[(student, "02_attention")]
        assert "TAMPERING" in row["flags"] and why in row["error"], row
    # The patched checker is imported afresh: the blank answers score 0, as they are.
    assert not rows[("s663", "02_attention")]["error"]
    # Nothing written outside its folder, nothing deleted, no process left behind.
    assert not list(ROOT.glob(f"pwned-{MARKER}")) and not pathlib.Path(f"/tmp/pwned-{MARKER}").exists()
    assert not list(term["submissions"].parent.rglob(f"pwned-{MARKER}"))
    assert len(list(term["submissions"].glob("*.ipynb"))) == 6 + 2 + len(ATTACKS) + 2
    assert (ROOT / "code/mintransformer/exercises/checks/02_attention/ex-attention-implement.py").is_file()
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert f"sleep {SLEEP}" not in ps


def test_no_hidden_case_reaches_a_student(term):
    leak = (term["out"] / "feedback" / "s662-02_attention.md").read_text()
    assert "ValueError: nothing found" in leak  # its function ran, found nothing, and said so
    hidden = (ROOT / "grading/hidden/02_attention/ex-attention-implement.py").read_text()
    for feedback in (term["out"] / "feedback").glob("*.md"):
        text = feedback.read_text()
        assert HIDDEN_MARK not in text and hidden.splitlines()[0] not in text, feedback
    assert HIDDEN_MARK not in (term["out"] / "grades.csv").read_text()


def test_the_sandbox_has_no_network_and_sees_no_repository(tmp_path):
    probe = ("import socket, os\n"
             "try:\n    socket.create_connection(('pypi.org', 443), timeout=3); print('open')\n"
             "except OSError as e:\n    print('closed')\n"
             f"print(os.path.exists({str(ROOT / 'grading')!r}), os.getuid())")
    run = subprocess.run(sandbox.command(tmp_path, 30) + [sys.executable, "-c", probe],
                         capture_output=True, text=True, timeout=120)
    assert run.stdout.split() == ["closed", "False", "65534"], run.stderr


def test_a_loop_is_stopped_and_the_reader_edition_refused(term):
    loop = term["rows"][("s404", "05_layer_norm")]
    assert loop["error"] == "grading took longer than 90 s" and float(loop["auto"]) == 0
    reader = term["rows"][("s777", "02_attention")]
    assert "reader's edition" in reader["error"] and float(reader["total"]) == 0


def test_feedback_says_what_the_student_saw(term):
    feedback = term["out"] / "feedback"
    text = (feedback / "s003-02_attention.md").read_text()
    assert "without the scale" in text  # the message of the known mistake
    assert "hidden test cases (run only when graded)" in text
    assert "0.7311" not in text and "0.731" not in text
    assert (feedback / "s002-05_layer_norm.md").is_file() and (feedback / "s001-02_attention.md").is_file()


def test_the_written_answers_page(term):
    folder = term["out"] / "written"
    page = (folder / "answers.html").read_text()
    for label in ("ex-attention-by-hand", "ex-attention-combine-masks", "ex-layernorm-rmsnorm"):
        assert f"id='{label}'" in page
    assert page.count("I do not know.") == 3  # s003's three answers, one per written part
    assert "\\(1/\\sqrt{d_k}\\)" in page and (folder / "mathjax" / "tex-chtml.js").is_file()
    assert "(no answer)" in page  # the blank student's
    assert "ex-attention-implement" not in page  # no written part
    pdf = (folder / "answers.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type /Page ") >= 3


def test_marks_then_the_lms_file(term):
    out = term["out"]
    with open(out / "grades.csv") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames, list(reader)
    for r in rows:
        if r["student_id"] == "s002":
            for column in header:
                if column.endswith(" written") and r["chapter"] and column in r and r[column] == "":
                    label = column[:-len(" written")]
                    if term["assignment"]["exercises"][label]["chapter"] == r["chapter"]:
                        r[column] = str(term["assignment"]["exercises"][label]["written"])
    with open(out / "grades.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerows(rows)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), "final", str(out)], check=True,
                   capture_output=True)
    with open(out / "grades.csv") as f:
        final = {(r["student_id"], r["chapter"]): r for r in csv.DictReader(f)}
    for chapter in CHAPTERS:
        r = final[("s002", chapter)]
        assert float(r["total"]) == float(r["possible"]) == float(r["auto"]) + float(r["written"])
    with open(out / "lms.csv") as f:
        lms = {r["Student ID"]: r for r in csv.DictReader(f)}
    title = term["assignment"]["title"]
    everything = sum(i["auto"] + i["written"] for i in term["assignment"]["exercises"].values())
    assert float(lms["s002"][title]) == float(lms["s002"]["Possible"]) == everything == 22  # both chapters
    assert float(lms["s404"]["Possible"]) == everything  # who missed a chapter is out of the same total
    assert float(lms["s001"][title]) == 0 and float(lms["s661"][title]) == 0


def test_gradescope_zips_carry_the_hidden_cases_and_the_pin(term, tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "grade.py"), "gradescope", str(tmp_path),
                    "--assignment", str(term["course"] / "week2.yml")], check=True, capture_output=True)
    for chapter in CHAPTERS:
        with zipfile.ZipFile(tmp_path / f"{chapter}-autograder.zip") as archive:
            names = archive.namelist()
            environment = archive.read("environment.yml").decode()  # otter puts the requirements there
            assert f"mintransformer[exercises] @ git+" in environment and f"@{PIN}\n" in environment, environment
            tests = [n for n in names if n.startswith("tests/")]
            labels = [l for l, i in term["assignment"]["exercises"].items() if i["chapter"] == chapter and i["auto"]]
            assert sorted(tests) == sorted(f"tests/{label}.py" for label in labels)
            assert all("hidden=True" in archive.read(t).decode() for t in tests)
            assert "run_autograder" in names or any(n.endswith("run_autograder") for n in names)


def test_an_assignment_with_a_mistake_is_refused(tmp_path):
    for text, message in [
        ("exercises:\n  ex-attention-nothing: 2\n", "no exercise"),
        ("exercises:\n  ex-attention-by-hand: 2\n", "graded by hand"),
        ("exercises:\n  ex-attention-implement: {auto: 2, written: 1}\n", "no part graded by hand"),
        ("exercises:\n  ex-attention-implement: -1\n", "positive"),
        ("title: x\n", "exercises"),
    ]:
        path = tmp_path / "a.yml"
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            grade.load_assignment(path)
    assert json.dumps(grade.load_assignment(chapters=["02_attention"]))  # the default: every exercise
