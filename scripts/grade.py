"""Grade a course's submitted notebooks: scores, feedback, written answers, an LMS file.

    python scripts/grade.py run SUBMISSIONS OUT [--assignment A.yml] [--timeout S] [--jobs N]
    python scripts/grade.py final OUT              # after you entered the written marks
    python scripts/grade.py gradescope OUT [--assignment A.yml]

``run`` grades every ``*.ipynb`` in SUBMISSIONS (the student edition, scripts/student_edition.py)
and writes into OUT:

- ``grades.csv``: one row per submission: the student's id, the file, the chapter, the edition,
  per exercise the points of its checks (public and hidden test cases) and of its hidden cases
  alone, an empty column per part graded by hand for your marks, the totals, ``error`` and
  ``flags``;
- ``feedback/<student>-<chapter>.md``: what the student would have seen under each check, the
  points, and how many hidden cases passed (not what they test);
- ``written/answers.html`` and ``answers.pdf``: every written answer, exercise by exercise,
  student by student, with its equations rendered;
- ``lms.csv``: one row per student: id, points, possible. ``final`` rewrites it, and the totals
  of grades.csv, once the written marks are in.

``gradescope`` writes one otter-grader autograder zip per chapter of the assignment, with the
hidden test cases and the pinned package in its requirements, for Gradescope (or ``otter grade``
with Docker).

The assignment (``--assignment``, YAML) names the exercises and their points::

    title: Week 3, attention
    pin: v1.0                      # the commit or tag the students' notebooks install
    exercises:
      ex-attention-by-hand: 2                          # auto-checked only: its points
      ex-attention-identical-keys: {auto: 2, written: 3}   # with a part graded by hand

Without it, every exercise of every chapter counts, its check's test cases one point each and each
part graded by hand one point.

Each submission runs in a kernel of its own, in a sandbox (scripts/sandbox.py: read-only system,
one writable throw-away folder, no network, its own processes, uid 65534, limits), killed with
everything it started at ``--timeout``. The book's own set-up cell replaces the student's; the
student's code cells after it run (their checks do not); then, in a last cell, the checks are
imported afresh and run with the hidden cases, which are copied into the sandbox only then. A check
run against nothing must score 0 there: if one does not, the grader was tampered with and the
submission scores 0, flagged. See instructors.md for what this does and does not protect.
"""

import argparse
import ast
import concurrent.futures
import csv
import html
import json
import os
import pathlib
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

import nbformat
import yaml

import mintransformer as mt

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import editions  # noqa: E402
import sandbox  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
HIDDEN = ROOT / "grading" / "hidden"
ANSWER_HEADING = re.compile(r"^#{1,6}\s*Written answer:\s*(ex-[A-Za-z0-9_-]+)\s*$")
ANSWER_PROMPT = re.compile(r"^\*Graded by hand:\*")
PLACEHOLDER = "Replace this line with your answer"
PLACEHOLDER_LINE = PLACEHOLDER + ", in markdown; equations in `$...$` or `$$...$$`."
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
CHECK_CELL = re.compile(r"^\s*grader\.check\(\s*['\"][^'\"]+['\"]\s*\)\s*$")


# --- what a submission is ------------------------------------------------------------------------

def chapter_of(path, nb=None):
    """The chapter a submission belongs to, from its metadata or its file name; None if unknown."""
    chapters = mt.exercises.chapters()
    try:
        nb = nb or nbformat.read(path, as_version=4)
        chapter = nb.metadata.get("mintransformer", {}).get("chapter")
        if chapter in chapters:
            return chapter
    except Exception:
        nb = None
    # The set-up cell names its chapter: grader = mt.exercises.grader("02_attention").
    if nb is not None:
        for cell in nb.cells:
            found = re.search(r'mt\.exercises\.grader\(\s*["\']([\w-]+)["\']', cell.get("source", ""))
            if cell.get("cell_type") == "code" and found and found.group(1) in chapters:
                return found.group(1)
    # The file name: a chapter's two digits ("10_...") or an appendix's letter ("appendix_a_..."),
    # also after a prefix ("Copy of 02_attention.ipynb").
    match = re.search(r"(?:^|[^0-9a-z])(\d\d|appendix_[a-z])_", pathlib.Path(path).name)
    candidates = [c for c in chapters if match and c.startswith(match.group(1) + "_")]
    return candidates[0] if len(candidates) == 1 else None


tags = editions.tags


def edition_of(nb):
    """'student', 'instructor' (solutions in place) or 'reader' (solutions folded), from the cells."""
    if any(c.cell_type == "markdown" and "<summary><b>Solution</b>" in c.source for c in nb.cells):
        return "reader"
    if any("exercise-solution" in tags(c) for c in nb.cells):
        return "instructor"
    return nb.metadata.get("mintransformer", {}).get("edition") or "student"


def student_id(nb):
    """The ``STUDENT_ID = "..."`` a student wrote in the notebook ("" if none), read, not run."""
    for cell in nb.cells:
        if cell.cell_type != "code" or "STUDENT_ID" not in cell.source:
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "STUDENT_ID" for t in node.targets)
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, (str, int))):
                return str(node.value.value).strip()
    return ""


def written_answers(nb):
    """{label: the student's text} of the notebook's answer cells (markdown).

    An answer cell is found by its metadata or its first line (``#### Written answer: <label>``);
    markdown cells the student added under it, up to the next code cell, belong to it, and two
    answer cells of one label are joined. The prompt line and the untouched placeholder are dropped.
    """
    answers, label = {}, None
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            label = None
            continue
        lines = cell.source.splitlines()
        own = cell.get("metadata", {}).get("mintransformer", {}).get("answer")
        if lines and ANSWER_HEADING.match(lines[0].strip()):
            own = ANSWER_HEADING.match(lines[0].strip()).group(1)
            lines = lines[1:]
        if own:
            label = own
            answers.setdefault(label, [])
        if label is None:
            continue
        kept = [line for line in lines if not ANSWER_PROMPT.match(line.strip()) and line.strip() != PLACEHOLDER_LINE]
        answers[label].append("\n".join(kept).strip())
    return {label: "\n\n".join(part for part in parts if part) for label, parts in answers.items()}


def answer_labels(chapter):
    """The chapter's exercises that have a part graded by hand (their answer cells)."""
    nb = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    return list(written_answers(nb))


def setup_source(chapter):
    """The book's set-up cell of the chapter's exercises (run instead of the student's copy)."""
    nb = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    (cell,) = [c for c in nb.cells if "exercise-setup" in tags(c)]
    return cell.source


def student_cells(nb):
    """The student's code cells to run: those after the set-up cell, checks left out."""
    cells = nb.cells
    starts = [i for i, c in enumerate(cells) if "exercise-setup" in tags(c)
              or (c.cell_type == "code" and "mt.exercises.grader(" in c.source)]
    if not starts:
        return None
    return [c.source for c in cells[starts[0] + 1:]
            if c.cell_type == "code" and "exercise-check" not in tags(c) and "otter_ignore" not in tags(c)
            and not CHECK_CELL.match(c.source)]


# --- the assignment --------------------------------------------------------------------------

def label_chapter(label):
    for chapter in mt.exercises.chapters():
        if label in mt.exercises.labels(chapter):
            return chapter
    for chapter in mt.exercises.chapters():
        if label in answer_labels(chapter):
            return chapter
    raise ValueError(f"no exercise {label!r} in the book")


def hidden_file(chapter, label, hidden_dir=HIDDEN):
    path = pathlib.Path(hidden_dir) / chapter / f"{label}.py"
    return path if path.is_file() else None


def load_assignment(path=None, chapters=None):
    """{"title", "pin", "exercises": {label: {"chapter", "auto", "written"}}} from a YAML file.

    Without a file: every exercise of ``chapters`` (default: all), each check case one point and
    each part graded by hand one point.
    """
    if path is None:
        exercises = {}
        for chapter in chapters or mt.exercises.chapters():
            written = answer_labels(chapter)
            for label in mt.exercises.labels(chapter):
                auto = mt.exercises.points(chapter, label, hidden_file(chapter, label))
                exercises[label] = {"chapter": chapter, "auto": float(auto), "written": float(label in written)}
            for label in written:
                exercises.setdefault(label, {"chapter": chapter, "auto": 0.0, "written": 1.0})
        return {"title": "mintransformer exercises", "pin": None, "exercises": exercises}
    spec = yaml.safe_load(pathlib.Path(path).read_text()) or {}
    unknown = set(spec) - {"title", "pin", "exercises"}
    if unknown or not isinstance(spec.get("exercises"), dict) or not spec["exercises"]:
        raise ValueError(f"{path}: an assignment has 'title', 'pin' and a non-empty 'exercises' mapping "
                         f"(unknown keys: {sorted(unknown)})")
    exercises = {}
    for label, points in spec["exercises"].items():
        chapter = label_chapter(label)
        has_check = label in mt.exercises.labels(chapter)
        has_written = label in answer_labels(chapter)
        if isinstance(points, (int, float)) and not isinstance(points, bool):
            points = {"auto": points}
        if not isinstance(points, dict) or set(points) - {"auto", "written"}:
            raise ValueError(f"{path}: {label}: give its points as a number or {{auto: N, written: M}}")
        auto, written = float(points.get("auto", 0)), float(points.get("written", 0))
        if auto < 0 or written < 0 or auto + written <= 0:
            raise ValueError(f"{path}: {label}: points must be positive")
        if auto and not has_check:
            raise ValueError(f"{path}: {label} has no check: it can only have written points")
        if written and not has_written:
            raise ValueError(f"{path}: {label} has no part graded by hand: it cannot have written points")
        if has_written and "written" not in points:
            raise ValueError(f"{path}: {label} has a part graded by hand: give {{auto: N, written: M}}")
        exercises[label] = {"chapter": chapter, "auto": auto, "written": written}
    pin = spec.get("pin")
    if pin is not None and not (isinstance(pin, str) and editions.PIN.fullmatch(pin)):
        raise ValueError(f"{path}: pin must be a tag or commit in quotes (YAML reads 0123456 as a number), "
                         f"not {pin!r}")
    return {"title": str(spec.get("title") or pathlib.Path(path).stem), "pin": pin, "exercises": exercises}


# --- running one submission ------------------------------------------------------------------

# The cells the grader adds to the kernel. Each writes what it found to a file named at random
# (the kernel's printed output is the student's to forge), which the grader reads at once.
FUNCTIONS = r"""
def _mt_functions():
    # Which object each function of the libraries the checks rely on is, and the import machinery.
    import sys
    roots = ("builtins", "math", "operator", "json", "numpy", "keras", "mintransformer")
    found = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in roots and not name.startswith("mintransformer.exercises") and module is not None:
            for key, value in list(vars(module).items()):
                if callable(value) and name + "." + key not in ("builtins.input", "builtins.raw_input"):
                    found[name + "." + key] = id(value)  # (input and raw_input: the kernel's, per cell)
    for i, hook in enumerate(sys.meta_path):
        found["sys.meta_path[%d]" % i] = id(hook)
    for i, hook in enumerate(sys.path_hooks):
        found["sys.path_hooks[%d]" % i] = id(hook)
    return found
"""

# Right after the book's set-up cell, before the student's code.
SNAPSHOT_CELL = FUNCTIONS + r"""

def _mt_snapshot(out):
    import json
    with open(out, "w") as f:
        json.dump({"functions": _mt_functions()}, f)


_mt_snapshot(__OUT__)
del _mt_snapshot, _mt_functions
"""

# After the student's code. Phase "public": the public cases only (nothing hidden exists in the
# kernel yet), their messages kept for the feedback. Phase "graded": public and hidden cases, given
# as text in this cell; scores only (no message leaves), and every check run against nothing too.
GRADING_CELL = FUNCTIONS + r"""

def _mt_grade(sources, keep_messages, student_id, out):
    import os, sys
    # The student's own processes must be gone: they could change files under our feet. (Threads
    # cannot be told from Keras's and TensorFlow's own.)
    processes = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
    # The checker and the checks' helpers imported afresh: a patch of the ones in memory is gone.
    for name in [n for n in sys.modules if n == "otter" or n.startswith(("otter.", "mintransformer.exercises"))]:
        del sys.modules[name]
    sys.settrace(None)
    sys.setprofile(None)
    import json
    from otter.test_files import ExceptionTestFile
    env = dict(globals())
    env["STUDENT_ID"] = student_id  # the id the notebook's cell holds (None if none), whatever the code did
    results = {}
    for label, source in sources.items():
        check = ExceptionTestFile.from_string(source, path=label + ".py")
        check.run(env)
        blank = ExceptionTestFile.from_string(source, path=label + ".py")
        blank.run({})  # nothing defined: must score 0, or the checks were tampered with
        results[label] = {
            "cases": [[r.test_case.name, bool(r.test_case.hidden), float(r.test_case.points), bool(r.passed),
                       r.message if keep_messages and not r.test_case.hidden else ""]
                      for r in check.test_case_results],
            "blank": float(blank.score)}
    with open(out, "w") as f:
        json.dump({"results": results, "functions": _mt_functions(), "processes": processes}, f)


_mt_grade(__SOURCES__, __KEEP__, __ID__, __OUT__)
"""


def _fill(template, **values):
    """The template with each ``__NAME__`` replaced by ``repr(values[NAME])``, in one pass (a value that
    holds another placeholder's text, such as a student's id, stays as it is)."""
    return re.sub(r"__([A-Z]+)__", lambda m: repr(values[m.group(1)]) if m.group(1) in values else m.group(0),
                  template)


def _tampering(snapshot, reply):
    """Why the kernel's state shows tampering, or ''."""
    before, now = snapshot["functions"], reply["functions"]
    changed = sorted(k for k in before if k in now and now[k] != before[k])
    if changed:
        return "functions replaced: " + ", ".join(changed[:10])
    if reply["processes"]:
        return f"{len(reply['processes'])} process(es) of the student's still running when the checks ran"
    blank = [label for label, result in reply["results"].items() if result["blank"] > 0]
    if blank:
        return "a blank answer scored on " + ", ".join(blank)
    return ""


def run_submission(cells, chapter, labels, hidden_dir, timeout, sandboxed=True, student=None):
    """({label: result}, error): run the cells in a sandboxed kernel, then the checks, in two phases.

    ``student``: the ``STUDENT_ID`` written in the notebook (None if none). The student's cells run
    with it (with "" if None), and the checks draw the per-student numbers from it.

    Each result holds the test cases ``[name, hidden, points, passed, message]`` of the graded run,
    with the messages of the public run (nothing hidden was in the kernel then).
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    deadline = time.monotonic() + timeout
    work = pathlib.Path(tempfile.mkdtemp(prefix="mt-grade-"))
    manager = None

    def out():
        return work / ("out-" + secrets.token_hex(8) + ".json")

    def run_cell(client, nb, source, extra=0):
        cell = nbformat.v4.new_code_cell(source)
        nb.cells.append(cell)
        client.timeout = max(1, int(deadline - time.monotonic())) + extra
        client.execute_cell(cell, len(nb.cells) - 1)
        if time.monotonic() > deadline + extra:
            raise CellTimeoutError("")

    def read(path):
        if not path.is_file():
            raise RuntimeError("the grader's cell did not finish (an error in the kernel)")
        return json.loads(path.read_text())

    try:
        nb = nbformat.v4.new_notebook()
        manager = sandbox.kernel_manager(work, cpu_seconds=(timeout + 120) * (os.cpu_count() or 1),
                                         sandboxed=sandboxed)
        client = NotebookClient(nb, km=manager, allow_errors=True, timeout=int(timeout), startup_timeout=120,
                                kernel_name="sandbox", resources={"metadata": {"path": str(work)}})
        with client.setup_kernel():
            run_cell(client, nb, cells[0])  # the book's set-up cell
            path = out()
            run_cell(client, nb, _fill(SNAPSHOT_CELL, OUT=str(path)))
            snapshot = read(path)  # read now, before any code of the student's has run
            run_cell(client, nb, f"STUDENT_ID = {student or ''!r}")  # the id cell's value: the cell is not run
            for source in cells[1:]:
                run_cell(client, nb, source)
            public = {label: mt.exercises.check_path(chapter, label).read_text() for label in labels}
            path = out()
            run_cell(client, nb, _fill(GRADING_CELL, SOURCES=public, KEEP=True, ID=student, OUT=str(path)), extra=60)
            first = read(path)
            # The hidden cases enter the kernel only now, as text, and no message comes back.
            merged = {label: mt.exercises.merged_source(chapter, label, hidden_file(chapter, label, hidden_dir))
                      for label in labels}
            path = out()
            run_cell(client, nb, _fill(GRADING_CELL, SOURCES=merged, KEEP=False, ID=student, OUT=str(path)), extra=60)
            graded = read(path)
        why = _tampering(snapshot, first) or _tampering(snapshot, graded)
        if why:
            return {}, "the checks were tampered with: " + why
        results = graded["results"]
        for label, result in results.items():  # the public run's messages, by case name
            messages = {case[0]: case[4] for case in first["results"].get(label, {}).get("cases", [])}
            for case in result["cases"]:
                case[4] = "" if case[1] else messages.get(case[0], "")
        return results, ""
    except CellTimeoutError:
        return {}, f"grading took longer than {timeout:g} s"
    except DeadKernelError:
        return {}, "the kernel died (out of memory, or a crash)"
    except Exception as error:  # a submission never stops the run; the kernel's words stay out
        return {}, f"grading failed: {type(error).__name__}"
    finally:
        # nbclient leaves a kernel manager it was given running: stop the kernel, and with it the
        # sandbox and every process in it.
        if manager is not None:
            from jupyter_core.utils import run_sync

            try:
                run_sync(manager.shutdown_kernel)(now=True)
            except Exception:
                pass
        shutil.rmtree(work, ignore_errors=True)


def grade_one(path, assignment, hidden_dir, timeout, sandboxed):
    """Everything known about one submission: id, chapter, scores, answers, error, flags."""
    record = {"submission": path.name, "student_id": "", "chapter": "", "edition": "", "error": "",
              "flags": [], "results": {}, "written": {}}
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as error:
        record["error"] = f"not a readable notebook: {type(error).__name__}"
        record["student_id"] = path.stem
        return record
    given = written_id = student_id(nb)
    if not given:
        record["flags"].append("no STUDENT_ID in the notebook: named after its file")
        given = path.stem
    record["student_id"] = safe_name(given)[:64]
    if not ID.fullmatch(given):
        record["flags"].append(f"STUDENT_ID {given[:40]!r} is not letters, digits and . _ @ -: filed as "
                               f"{record['student_id']!r}")
    pins = set(editions.INSTALLED_PIN.findall("\n".join(c.source for c in nb.cells)))
    if assignment.get("pin") and pins and pins != {assignment["pin"]}:
        record["flags"].append(f"installs another version of the book ({', '.join(sorted(pins))}), "
                               f"not {assignment['pin']}")
    chapter = record["chapter"] = chapter_of(path, nb) or ""
    edition = record["edition"] = edition_of(nb)
    if not chapter:
        record["error"] = "unknown chapter: no mintransformer metadata, no NN_ or appendix_x_ prefix"
        return record
    record["written"] = {label: text for label, text in written_answers(nb).items()
                         if label in assignment["exercises"]}
    if edition == "reader":
        record["error"] = ("the reader's edition (the book's Colab notebook, solutions folded in it), "
                           "not the student edition: not graded")
        return record
    if edition == "instructor":
        record["flags"].append("the instructor's edition (the solutions in place)")
    labels = [label for label, item in assignment["exercises"].items()
              if item["chapter"] == chapter and item["auto"] > 0]
    if not any(item["chapter"] == chapter for item in assignment["exercises"].values()):
        record["error"] = f"chapter {chapter} is not in the assignment"
        return record
    if not labels:
        return record
    cells = student_cells(nb)
    if cells is None:
        record["error"] = "no exercises' set-up cell: is this the student edition?"
        return record
    results, error = run_submission([setup_source(chapter)] + cells, chapter, labels, hidden_dir, timeout,
                                    sandboxed, student=written_id or None)
    if error.startswith("the checks were tampered with"):
        record["flags"].append("TAMPERING")
    record["results"], record["error"] = results, error
    return record


# --- scores and files ------------------------------------------------------------------------

def scores(record, assignment):
    """{label: (points, hidden passed, hidden possible)} of the assignment's auto-checked exercises."""
    out = {}
    for label, item in assignment["exercises"].items():
        if item["chapter"] != record["chapter"] or not item["auto"]:
            continue
        cases = record["results"].get(label, {}).get("cases", [])
        possible = sum(c[2] for c in cases)
        passed = sum(c[2] for c in cases if c[3])
        hidden = [c for c in cases if c[1]]
        out[label] = (item["auto"] * passed / possible if possible else 0.0,
                      sum(c[2] for c in hidden if c[3]), sum(c[2] for c in hidden))
    return out


def columns(assignment):
    cols = []
    for label, item in assignment["exercises"].items():
        if item["auto"]:
            cols += [label, f"{label} hidden"]
        if item["written"]:
            cols.append(f"{label} written")
    return cols


def possible(record, assignment):
    return sum(item["auto"] + item["written"] for item in assignment["exercises"].values()
               if item["chapter"] == record["chapter"])


def _fmt(value):
    return f"{value:g}" if isinstance(value, float) else value


def row(record, assignment):
    out = {"student_id": record["student_id"], "submission": record["submission"],
           "chapter": record["chapter"], "edition": record["edition"]}
    total = 0.0
    for label, (points, hidden, hidden_possible) in scores(record, assignment).items():
        out[label] = round(points, 4)
        out[f"{label} hidden"] = f"{hidden:g}/{hidden_possible:g}"
        total += points
    for label, item in assignment["exercises"].items():
        if item["written"] and item["chapter"] == record["chapter"]:
            out[f"{label} written"] = ""  # the instructor's mark
    out.update(auto=round(total, 4), written="", total=round(total, 4),
               possible=float(possible(record, assignment)), error=record["error"],
               flags="; ".join(record["flags"]))
    return out


def feedback(record, assignment):
    """The student's feedback, in markdown: what each check said, and the points."""
    lines = [f"# Feedback: {assignment['title']}", "",
             f"- Student: {record['student_id']}", f"- Notebook: {record['submission']} ({record['chapter']})"]
    if record["error"]:
        lines.append(f"- Not graded: {record['error']}")
    lines.append("")
    for label, (points, hidden, hidden_possible) in scores(record, assignment).items():
        item = assignment["exercises"][label]
        lines += [f"## {label}: {points:g} / {item['auto']:g} points", ""]
        for name, is_hidden, _, passed, message in record["results"].get(label, {}).get("cases", []):
            if not is_hidden:
                lines.append(f"- {'passed' if passed else 'failed'}: `{name}`")
                if not passed:
                    lines += ["", "  ```", *("  " + m for m in message.splitlines()), "  ```", ""]
        if hidden_possible:
            lines.append(f"- hidden test cases (run only when graded): {hidden:g} of {hidden_possible:g} "
                         "points passed")
        lines.append("")
    for label, item in assignment["exercises"].items():
        if item["written"] and item["chapter"] == record["chapter"]:
            state = "answered" if record["written"].get(label) else "no answer found"
            lines += [f"## {label}, written part: graded by hand, {_points(item['written'])} ({state})", ""]
    return "\n".join(lines).rstrip() + "\n"


def _points(value):
    return f"{value:g} point" + ("" if value == 1 else "s")


def safe_name(text):
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "submission"


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, restval="")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: _fmt(v) for k, v in r.items() if k in header})


GRADES_HEAD = ["student_id", "submission", "chapter", "edition"]
GRADES_TAIL = ["auto", "written", "total", "possible", "error", "flags"]


def write_lms(out, rows, assignment):
    """lms.csv: one row per student: id, points (the best submission of each chapter), possible.

    ``Possible`` is the assignment's, whatever the student handed in.
    """
    title = assignment["title"]
    total = float(sum(item["auto"] + item["written"] for item in assignment["exercises"].values()))
    best = {}
    for r in rows:
        key = (r["student_id"], r["chapter"])
        best[key] = max(best.get(key, 0.0), float(r["total"] or 0))
    students = {}
    for (student, _), points in best.items():
        students[student] = students.get(student, 0.0) + points
    write_csv(out / "lms.csv", ["Student ID", title, "Possible"],
              [{"Student ID": student, title: round(points, 4), "Possible": total}
               for student, points in sorted(students.items())])


def grade(submissions, out, assignment=None, hidden_dir=HIDDEN, timeout=600, jobs=1, sandboxed=True,
          log=print):
    """Grade every ``*.ipynb`` in ``submissions`` into the folder ``out``; return grades.csv's rows."""
    paths = sorted(pathlib.Path(submissions).glob("*.ipynb"))
    if not paths:
        raise SystemExit(f"no notebooks (*.ipynb) in {submissions}")
    if sandboxed:
        for what, folder in (("the hidden test cases", hidden_dir), ("the submissions", submissions)):
            if sandbox.exposed(folder):
                raise SystemExit(f"{what} ({folder}) lie under {sandbox.exposed(folder)}, which every "
                                 "sandbox reads: move them elsewhere")
        ok, why = sandbox.works()
        if not ok:
            raise SystemExit(f"cannot grade in a sandbox: {why}. Install bubblewrap (apt-get install "
                             "bubblewrap), or pass --no-sandbox to run students' code as yourself.")
    if assignment is None:  # every exercise of the chapters handed in
        found = {chapter_of(path) for path in paths} - {None}
        assignment = load_assignment(chapters=sorted(found) or None)
    out = pathlib.Path(out)
    (out / "feedback").mkdir(parents=True, exist_ok=True)

    def one(path):
        start = time.perf_counter()
        record = grade_one(path, assignment, hidden_dir, timeout, sandboxed)
        r = row(record, assignment)
        log(f"{path.name}: {record['student_id']} {record['chapter'] or '?'} {r['total']:g}/{r['possible']:g}"
            f"{'  ERROR ' + record['error'] if record['error'] else ''}"
            f"{'  FLAGS ' + r['flags'] if r['flags'] else ''}  ({time.perf_counter() - start:.0f} s)")
        return record, r

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = list(pool.map(one, paths))
    records, rows = [d[0] for d in done], [d[1] for d in done]
    seen = {}
    for record, r in done:  # two submissions filed under one id, for one chapter: flagged, not merged
        seen.setdefault((record["student_id"], record["chapter"]), []).append(r)
    for twins in seen.values():
        if len(twins) > 1:
            for r in twins:
                r["flags"] = "; ".join(filter(None, [r["flags"], f"{len(twins)} submissions under this id for "
                                                     "this chapter: only the best counts in lms.csv"]))
    write_csv(out / "grades.csv", GRADES_HEAD + columns(assignment) + GRADES_TAIL, rows)
    names = {}
    for record in records:
        name = safe_name(f"{record['student_id']}-{record['chapter'] or 'unknown'}")
        names[name] = names.get(name, 0) + 1
        if names[name] > 1:
            name += f"-{names[name]}"
        (out / "feedback" / f"{name}.md").write_text(feedback(record, assignment))
    (out / "results.json").write_text(json.dumps({"assignment": assignment, "submissions": records}, indent=1))
    write_lms(out, rows, assignment)
    written_page(records, assignment, out / "written")
    return rows


# --- after marking ---------------------------------------------------------------------------

def _number(text, where):
    """A mark as a spreadsheet may write it: ' 2 ', '1.5', '1,5'."""
    try:
        return float(text.strip().replace(",", "."))
    except ValueError:
        raise SystemExit(f"{where}: {text!r} is not a number") from None


def final(out):
    """Totals of grades.csv with the instructor's written marks; lms.csv rewritten. Returns the rows.

    grades.csv may come back from a spreadsheet separated by commas or semicolons.
    """
    out = pathlib.Path(out)
    text = (out / "grades.csv").read_text(encoding="utf-8-sig")
    dialect = csv.Sniffer().sniff(text.splitlines()[0], delimiters=",;\t")
    rows = list(csv.DictReader(text.splitlines(), dialect=dialect))
    header = list(rows[0]) if rows else []
    if "chapter" not in header or "auto" not in header:
        raise SystemExit(f"{out / 'grades.csv'}: no 'chapter' or 'auto' column: is it the grader's file?")
    assignment = json.loads((out / "results.json").read_text())["assignment"]
    for n, r in enumerate(rows, start=2):
        written = 0.0
        for label, item in assignment["exercises"].items():
            key = f"{label} written"
            if item["written"] and item["chapter"] == r["chapter"] and (r.get(key) or "").strip():
                mark = _number(r[key], f"grades.csv line {n}, {key}")
                if not 0 <= mark <= item["written"]:
                    raise SystemExit(f"grades.csv line {n} ({r['submission']}): {key} = {mark:g}, "
                                     f"outside 0..{item['written']:g}")
                written += mark
        r["written"] = round(written, 4)
        r["total"] = round(_number(r["auto"] or "0", f"grades.csv line {n}, auto") + written, 4)
    write_csv(out / "grades.csv", header, rows)
    write_lms(out, rows, assignment)
    return rows


# --- the written answers, on one page --------------------------------------------------------

def _mathjax_dir():
    """MathJax 3 as the book's sphinx-mathjax-offline ships it, or None."""
    import importlib.metadata

    try:
        path = importlib.metadata.distribution("sphinx-mathjax-offline").locate_file(
            "sphinx-mathjax-offline/static/mathjax")
    except importlib.metadata.PackageNotFoundError:
        return None
    return pathlib.Path(path) if (pathlib.Path(path) / "tex-chtml.js").is_file() else None


def render_markdown(text):
    """A student's markdown as HTML (no raw HTML passes), its math left for MathJax."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": False}).enable("table").use(dollarmath_plugin, double_inline=True)
    md.add_render_rule("math_inline", lambda self, tokens, idx, options, env:
                       "\\(" + html.escape(tokens[idx].content) + "\\)")
    md.add_render_rule("math_block", lambda self, tokens, idx, options, env:
                       "<div class='math'>\\[" + html.escape(tokens[idx].content) + "\\]</div>\n")
    return md.render(text)


def written_page(records, assignment, folder):
    """written/answers.html (and answers.pdf where Chromium is): the answers by exercise, then student."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    parts = []
    for label, item in assignment["exercises"].items():
        if not item["written"]:
            continue
        parts.append(f"<section><h2 id='{html.escape(label)}'>{html.escape(label)} "
                     f"<small>({html.escape(item['chapter'])}, {_points(item['written'])})</small></h2>")
        for record in sorted(records, key=lambda r: r["student_id"]):
            if record["chapter"] != item["chapter"]:
                continue
            text = record["written"].get(label, "")
            body = render_markdown(text) if text else "<p class='none'>(no answer)</p>"
            parts.append(f"<article><h3>{html.escape(record['student_id'])} <small>{html.escape(record['submission'])}"
                         f"</small></h3>{body}<p class='mark'>Mark: ____ / {item['written']:g}</p></article>")
        parts.append("</section>")
    mathjax = _mathjax_dir()
    script = ""
    if mathjax:
        shutil.copytree(mathjax, folder / "mathjax", dirs_exist_ok=True)
        script = "<script defer src='mathjax/tex-chtml.js'></script>"
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Written answers: {html.escape(assignment['title'])}</title>
<script>window.MathJax = {{tex: {{inlineMath: [['\\\\(', '\\\\)']]}}}};</script>{script}
<style>body{{font-family:sans-serif;max-width:50em;margin:2em auto;line-height:1.45}}
article{{border-top:1px solid #ccc;padding:.3em 0;break-inside:avoid}} h2{{break-before:page}}
.none{{color:#888}} .mark{{text-align:right;color:#444}} small{{color:#666;font-weight:normal}}</style>
</head><body><h1>Written answers: {html.escape(assignment['title'])}</h1>
{''.join(parts)}
</body></html>
"""
    (folder / "answers.html").write_text(page)
    try:
        import book_browser

        with book_browser.chromium() as browser:
            page_ = browser.new_page()
            page_.goto((folder / "answers.html").resolve().as_uri())
            page_.wait_for_function("window.MathJax && window.MathJax.startup && window.MathJax.startup.promise",
                                    timeout=60000) if mathjax else None
            page_.evaluate("() => window.MathJax ? window.MathJax.startup.promise.then(() => true) : true")
            page_.pdf(path=str(folder / "answers.pdf"), format="A4", print_background=True,
                      margin={"top": "15mm", "bottom": "15mm", "left": "15mm", "right": "15mm"})
    except Exception as error:  # no Chromium: the HTML page is still there
        print(f"answers.pdf not written ({type(error).__name__}: {error}); answers.html is", file=sys.stderr)
    return folder / "answers.html"


# --- Gradescope ------------------------------------------------------------------------------

def gradescope(out, assignment, url=None, hidden_dir=HIDDEN):
    """One otter-grader autograder zip per chapter: its checks with the hidden cases, the pinned package."""
    import run_notebook

    url = url or run_notebook.repository_url()
    pin = assignment.get("pin")
    requirement = f"mintransformer[exercises] @ git+{url}" + (f"@{pin}" if pin else "")
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    zips = []
    for chapter in dict.fromkeys(item["chapter"] for item in assignment["exercises"].values()):
        labels = [label for label, item in assignment["exercises"].items()
                  if item["chapter"] == chapter and item["auto"]]
        if not labels:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            tests = pathlib.Path(tmp) / "tests"
            tests.mkdir()
            for label in labels:
                source = mt.exercises.merged_source(chapter, label, hidden_file(chapter, label, hidden_dir))
                (tests / f"{label}.py").write_text(source)
            # (Python 3.11 there: the wrapt 1 that otter-grader pins serves; wrapt>=2 would not resolve.)
            (pathlib.Path(tmp) / "requirements.txt").write_text(f"{requirement}\n")
            path = out / f"{chapter}-autograder.zip"
            subprocess.run([str(pathlib.Path(sys.executable).with_name("otter")), "generate",
                            "--tests-dir", str(tests), "--output-path", str(path.resolve()),
                            "--requirements", "requirements.txt", "--no-config", "--no-environment",
                            "--python-version", "3.11"],
                           check=True, capture_output=True, text=True, cwd=tmp)
            zips.append(path)
    return zips


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="grade a folder of submissions")
    run.add_argument("submissions", help="folder of submitted notebooks (*.ipynb)")
    run.add_argument("out", help="folder for grades.csv, lms.csv, feedback/, written/")
    run.add_argument("--assignment", help="the assignment's YAML file (default: every exercise)")
    run.add_argument("--hidden", default=str(HIDDEN), help="folder of hidden test cases (default: grading/hidden)")
    run.add_argument("--timeout", type=float, default=600, help="seconds per submission (default 600)")
    run.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2),
                     help="submissions graded at a time (default: half the CPUs)")
    run.add_argument("--no-sandbox", action="store_true",
                     help="run students' code as yourself, with your files and network (not recommended)")
    fin = sub.add_parser("final", help="add the written marks you entered in grades.csv; rewrite lms.csv")
    fin.add_argument("out")
    gs = sub.add_parser("gradescope", help="write Gradescope autograder zips, one per chapter")
    gs.add_argument("out")
    gs.add_argument("--assignment")
    args = parser.parse_args(argv)
    if args.command == "run":
        start = time.perf_counter()
        assignment = load_assignment(args.assignment) if args.assignment else None
        rows = grade(args.submissions, args.out, assignment, args.hidden, args.timeout,
                     args.jobs, sandboxed=not args.no_sandbox)
        print(f"graded {len(rows)} submissions in {time.perf_counter() - start:.0f} s -> {args.out}")
    elif args.command == "final":
        rows = final(args.out)
        print(f"{len(rows)} rows; totals and lms.csv updated in {args.out}")
    else:
        for path in gradescope(args.out, load_assignment(args.assignment)):
            print(path)


if __name__ == "__main__":
    main()
