"""Write the student edition: one notebook per chapter, with no solution, for Colab.

    python scripts/student_edition.py OUT_DIR [--solutions] [--chapters 02_attention ...]

Each exercise is followed by a cell to work in and its check, ``grader.check("ex-...")``; neither
the solutions' code nor their text is there. The notebooks are the chapters as the book shows them,
with the MyST turned into plain markdown (scripts/editions.py), so Colab renders them: equations
numbered as in the book, references resolved, every link pointing at the rendered book.

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
    parser.add_argument("--html", action="store_true", help="also the HTML book without solutions")
    args = parser.parse_args(argv)
    edition = "instructor" if args.solutions else "student"
    for path in editions.write(edition, args.out_dir, args.chapters):
        print(path)
    if args.html and not args.solutions:
        print(editions.html_without_solutions(pathlib.Path(args.out_dir) / "html"))


if __name__ == "__main__":
    main()
