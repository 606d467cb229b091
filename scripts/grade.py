"""Grade a folder of submitted chapter notebooks with otter-grader: one CSV row per submission.

    python scripts/grade.py SUBMISSIONS_DIR OUT.csv [--timeout SECONDS]

Each submission is a student's notebook of the student edition (scripts/student_edition.py). Its
chapter is read from the notebook's metadata (``mintransformer.chapter``, written by the student
edition) or, failing that, from its file name's prefix (``02_attention...ipynb``,
``10_translation...ipynb``). For each chapter, the checks that ship with the package
(``mintransformer/exercises/checks/<chapter>/``) are packed into an otter autograder (``otter
generate``), and each submission is graded by otter without containers
(``otter.api.grade_submission``): the notebook's set-up cell and exercises run in a fresh
kernel, the chapter's body is skipped (its cells are tagged ``otter_ignore``), and every check of
the chapter is run against what the student defined.

The CSV has one row per submission: its file, its chapter, one column per exercise (the points
scored), ``total``, ``possible`` and ``error``. A submission that cannot be read, or whose kernel
dies or runs past ``--timeout``, scores 0 on every exercise and says why in ``error``; it never
stops the run. A cell that raises does not stop grading either: the exercises it would have
defined score 0.

Submissions are graded ``--jobs`` at a time (default: one per CPU), each in its own kernel.
"""

import argparse
import concurrent.futures
import csv
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import nbformat

import mintransformer as mt

# Run in a child process, so that a submission that hangs or kills its kernel costs only its row.
GRADE_ONE = """
import json, sys
from otter.api import grade_submission
results = grade_submission(sys.argv[1], sys.argv[2], quiet=True)
scores = {name: results.get_score(name) for name in results.results}
print("MT-SCORES " + json.dumps(scores))
"""


def chapter_of(path):
    """The chapter a submission belongs to, from its metadata or its file name; None if unknown."""
    chapters = mt.exercises.chapters()
    try:
        nb = nbformat.read(path, as_version=4)
        chapter = nb.metadata.get("mintransformer", {}).get("chapter")
        if chapter in chapters:
            return chapter
    except Exception:
        pass
    # The prefix: a chapter's two digits ("10_...") or an appendix's letter ("appendix_a_...").
    match = re.match(r"(\d\d|appendix_[a-z])_", path.name)
    candidates = [c for c in chapters if match and c.startswith(match.group(1) + "_")]
    return candidates[0] if len(candidates) == 1 else None


def autograder(chapter, workdir):
    """Pack the chapter's checks into an otter autograder zip (``otter generate``)."""
    zip_path = pathlib.Path(workdir) / f"{chapter}-autograder.zip"
    subprocess.run(
        [str(pathlib.Path(sys.executable).with_name("otter")), "generate",
         "--tests-dir", mt.exercises.tests_dir(chapter), "--output-path", str(zip_path),
         "--no-config", "--no-requirements", "--no-environment"],
        check=True, capture_output=True, text=True, cwd=workdir)
    return zip_path


def grade_one(path, zip_path, timeout):
    """({label: points}, error or ""), grading one submission in its own process."""
    try:
        nbformat.read(path, as_version=4)
    except Exception as error:
        return {}, f"not a readable notebook: {type(error).__name__}"
    try:
        run = subprocess.run([sys.executable, "-c", GRADE_ONE, str(path), str(zip_path)],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {}, f"grading took longer than {timeout} s"
    for line in run.stdout.splitlines():
        if line.startswith("MT-SCORES "):
            return json.loads(line[len("MT-SCORES "):]), ""
    last = (run.stderr.strip().splitlines() or ["no output"])[-1]
    return {}, f"grading failed: {last[:200]}"


def grade(submissions, out_csv, timeout=600, log=print, jobs=1):
    """Grade every ``*.ipynb`` in ``submissions``; write ``out_csv``; return its rows.

    ``jobs`` submissions are graded at a time, each in its own process and kernel.
    """
    paths = sorted(pathlib.Path(submissions).glob("*.ipynb"))
    if not paths:
        raise SystemExit(f"no notebooks (*.ipynb) in {submissions}")
    with tempfile.TemporaryDirectory() as workdir:
        chapters = {path: chapter_of(path) for path in paths}
        zips = {c: autograder(c, workdir) for c in sorted(set(chapters.values()) - {None})}

        def one(path):
            start, chapter = time.perf_counter(), chapters[path]
            row = {"submission": path.name, "chapter": chapter or ""}
            if chapter is None:
                scores = {}
                row["error"] = "unknown chapter: no mintransformer metadata, no NN_ or NNb_ prefix"
            else:
                scores, row["error"] = grade_one(path, zips[chapter], timeout)
            labels = mt.exercises.labels(chapter) if chapter else []
            for label in labels:
                row[label] = float(scores.get(label, 0.0))
            row["total"] = sum(row[label] for label in labels)
            row["possible"] = float(sum(mt.exercises.points(chapter, label) for label in labels))
            log(f"{path.name}: {chapter or '?'} {row['total']:g}/{row['possible']:g}"
                f"{'  ERROR ' + row['error'] if row['error'] else ''}"
                f"  ({time.perf_counter() - start:.0f} s)")
            return row

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            rows = list(pool.map(one, paths))
    columns = []
    for chapter in dict.fromkeys(c for c in chapters.values() if c):
        columns += [label for label in mt.exercises.labels(chapter) if label not in columns]
    header = ["submission", "chapter", *columns, "total", "possible", "error"]
    with open(out_csv, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, restval="")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:g}" if isinstance(v, float) else v) for k, v in row.items()})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", help="folder of submitted notebooks (*.ipynb)")
    parser.add_argument("out_csv", help="where to write the grades")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds allowed to grade one submission (default 600)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="submissions graded at a time (default: the number of CPUs)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = grade(args.submissions, args.out_csv, args.timeout, jobs=args.jobs)
    print(f"graded {len(rows)} submissions in {time.perf_counter() - start:.0f} s -> {args.out_csv}")


if __name__ == "__main__":
    main()
