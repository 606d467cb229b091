"""The paper's figures in mintransformer.diagrams, and the script that saves them as PNG files."""

import pathlib
import subprocess
import sys

import pytest
from matplotlib.figure import Figure

from mintransformer import diagrams

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Each drawing, the least number of text labels it holds, and labels it must show.
EXPECTED = {
    "scaled_dot_product_attention_figure": (
        10, ["Q", "K", "V", "MatMul", "SoftMax", "Mask (opt.)", "logits (B, h, T, S)"]),
    "multi_head_attention_figure": (
        10, ["Q", "K", "V", "Linear", "Scaled Dot-Product\nAttention", "Concat", "h"]),
    "transformer_figure": (
        25, ["Inputs", "Outputs\n(shifted right)", "Input\nEmbedding", "Output\nEmbedding",
             "Positional\nEncoding", "Multi-Head\nAttention", "Masked\nMulti-Head\nAttention",
             "Add & Norm", "Feed\nForward", "N×", "Linear", "Softmax", "Output Probabilities"]),
}


def labels(fig):
    return [text.get_text() for ax in fig.axes for text in ax.texts]


@pytest.mark.parametrize("name", EXPECTED)
def test_figure_has_the_papers_labels(name):
    fig = getattr(diagrams, name)()
    assert isinstance(fig, Figure)
    found = labels(fig)
    least, required = EXPECTED[name]
    assert len(found) >= least
    assert not set(required) - set(found), set(required) - set(found)


def test_transformer_figure_counts_its_sublayers():
    found = labels(diagrams.transformer_figure())
    # Encoder: 2 sub-layers, decoder: 3, each followed by Add & Norm.
    assert found.count("Add & Norm") == 5
    assert found.count("Multi-Head\nAttention") == 2  # encoder self-attention, cross-attention
    assert found.count("Feed\nForward") == 2
    assert found.count("Positional\nEncoding") == 2


def test_figures_are_deterministic():
    first = labels(diagrams.transformer_figure())
    assert first == labels(diagrams.transformer_figure())


def test_make_figures_writes_the_three_pngs(tmp_path):
    script = ROOT / "paper_imgs" / "make_figures.py"
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, capture_output=True)
    for name in ("scaled_dot_product_attention.png", "multi_head_attention.png",
                 "transformer.png"):
        data = (tmp_path / name).read_bytes()
        assert data.startswith(b"\x89PNG"), name
        assert len(data) > 10_000, name


@pytest.mark.parametrize("replicas", [2, 3])
def test_data_parallel_figure_draws_one_column_per_replica(replicas):
    found = labels(diagrams.data_parallel_figure(replicas))
    assert found.count("same update") == replicas
    assert [f"replica {r + 1}\n/cpu:{r}" for r in range(replicas)] == [t for t in found if t.startswith("replica")]
    assert "all-reduce: sum of the replicas' gradients" in found
