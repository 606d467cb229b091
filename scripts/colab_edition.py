"""Write the reader's Colab edition: the chapters as the book's Colab buttons open them.

    python scripts/colab_edition.py [OUT_DIR]     (default: colab/chapters, which is committed)

The chapters with their MyST turned into plain markdown (scripts/editions.py): equations numbered
as in the book, references and citations resolved to text, admonitions as plain markdown, every
link pointing at the rendered book. Each exercise has its work cell, its solution folded in a
``<details>`` block, and its check. The book's launch buttons open ``colab/chapters/`` on GitHub
(``repository.path_to_book: colab`` in _config.yml); tests/test_editions.py fails when those
notebooks are older than the chapters: rerun this script and commit them.
"""

import argparse

import editions


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", nargs="?", default=str(editions.ROOT / "colab" / "chapters"))
    args = parser.parse_args(argv)
    for path in editions.write("reader", args.out_dir):
        print(path)


if __name__ == "__main__":
    main()
