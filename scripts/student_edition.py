"""Write the student edition: one notebook per chapter, with no solution, for Colab.

    python scripts/student_edition.py OUT_DIR [--assignment A.yml] [--pin REF] [--chapters 02_attention ...]
    python scripts/student_edition.py OUT_DIR --solutions      # the instructor's key

Each exercise is followed by a cell to work in, a *Written answer* cell where it has a part graded
by hand, and its check, ``grader.check("ex-...")``; neither the solutions' code nor their text is
there. Under the title, a cell asks for the student's id (``STUDENT_ID``), which the grader files
the grade under. The notebooks are the chapters as the book shows them, with the MyST turned into
plain markdown (scripts/editions.py), so Colab renders them: equations numbered as in the book,
references resolved, every link pointing at the rendered book.

``--assignment`` (the YAML file scripts/grade.py reads) gives the chapters and the pin.
``--pin`` (a commit or tag of the book's repository; default: the assignment's ``pin``) makes the
install cell install the package at that version, so that every student, and the grader, run the
same checks all term.

``--html`` also writes the HTML book without solutions into OUT_DIR/html (each exercise with its
work cell and its check, the rest of the book as usual).

``--solutions`` writes the instructor's edition instead: the same notebooks with the reference
solutions in place, as cells that run; it grades to full marks with scripts/grade.py.
"""

import argparse
import pathlib

import editions


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--solutions", action="store_true",
                        help="the instructor's edition: the reference solutions in place")
    parser.add_argument("--chapters", nargs="*", help="chapter stems (default: every chapter)")
    parser.add_argument("--assignment", help="an assignment's YAML file: its chapters and its pin")
    parser.add_argument("--pin", help="a commit or tag: the install cell installs the package at it")
    parser.add_argument("--html", action="store_true", help="also the HTML book without solutions")
    args = parser.parse_args(argv)
    chapters, pin = args.chapters, args.pin
    if args.assignment:
        import grade

        assignment = grade.load_assignment(args.assignment)
        chapters = chapters or list(dict.fromkeys(i["chapter"] for i in assignment["exercises"].values()))
        pin = pin or assignment["pin"]
    edition = "instructor" if args.solutions else "student"
    for path in editions.write(edition, args.out_dir, chapters, pin=pin):
        print(path)
    if args.html and not args.solutions:
        print(editions.html_without_solutions(pathlib.Path(args.out_dir) / "html"))


if __name__ == "__main__":
    main()
