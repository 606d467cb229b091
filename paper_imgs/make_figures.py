"""Draw the paper's three figures with mintransformer.diagrams and save them as PNG files.

Usage: python paper_imgs/make_figures.py [OUTPUT_DIR]   (default: the folder of this script)
"""

import pathlib
import sys

from mintransformer import diagrams

FIGURES = {
    "scaled_dot_product_attention.png": diagrams.scaled_dot_product_attention_figure,
    "multi_head_attention.png": diagrams.multi_head_attention_figure,
    "transformer.png": diagrams.transformer_figure,
}


def main(output_dir=None):
    """Save every figure into ``output_dir`` and return the paths written."""
    output_dir = pathlib.Path(output_dir or pathlib.Path(__file__).resolve().parent)
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, draw in FIGURES.items():
        path = output_dir / name
        # Fixed metadata so that regenerating an unchanged figure gives identical bytes.
        draw().savefig(path, dpi=150, bbox_inches="tight", metadata={"Software": None})
        paths.append(path)
        print(f"wrote {path}")
    return paths


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
