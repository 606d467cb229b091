"""Chapter 13's figures (mintransformer.plotting_modern): each draws what its caption says."""

import math

import numpy as np
from matplotlib.figure import Figure

from mintransformer import plotting_modern
from mintransformer.rotary import rotary_frequencies


def texts(ax):
    return [t.get_text() for t in ax.texts]


def test_the_rotation_turns_each_pair_by_its_frequency_per_position():
    fig = plotting_modern.rotation_figure(depth=16, pairs=(0, 2), positions=range(4), vector=(1.0, 0.0))
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    theta = rotary_frequencies(16)
    for ax, i in zip(fig.axes, (0, 2)):
        tips = [a.xy for a in ax.texts if not a.get_text().startswith("m=")]  # the arrows' heads
        angles = [math.atan2(y, x) for x, y in tips]
        expected = [math.atan2(math.sin(m * theta[i]), math.cos(m * theta[i])) for m in range(4)]
        np.testing.assert_allclose(angles, expected, atol=1e-5)
        assert [t for t in texts(ax) if t.startswith("m=")] == ["m=0", "m=1", "m=2", "m=3"]
        assert ax.get_xlabel() == f"feature {2 * i}"


def test_the_cache_panels_label_each_grouping_in_its_own_unit():
    fig = plotting_modern.cache_memory_figure([("small", [1, 2, 4], [1024, 2048, 4096]),
                                               ("large", [1, 8, 32], [2**30, 2**33, 2**35])])
    small, large = fig.axes
    assert small.get_ylabel().endswith("(KiB)") and large.get_ylabel().endswith("(GiB)")
    assert texts(small) == ["MQA\n1", "GQA\n2", "MHA\n4"]
    assert texts(large) == ["MQA\n1", "GQA\n8", "MHA\n32"]


def test_the_tiles_cover_the_keys_and_mark_the_one_in_memory():
    fig = plotting_modern.tiles_figure(num_queries=4, num_keys=20, block_size=6, current=1)
    labels = texts(fig.axes[0])
    assert [t.split("\n")[0] for t in labels if t.startswith("keys")] == ["keys 0-5", "keys 6-11", "keys 12-17",
                                                                          "keys 18-19"]
    assert sum("in memory" in t for t in labels) == 1 and sum("folded into" in t for t in labels) == 1


def test_the_paired_differences_have_one_row_per_comparison():
    rows = [("a", [0.1, -0.2, 0.3], -0.3, 0.0667, 0.4), ("b", [1.0, 1.1], 0.5, 1.05, 1.6)]
    fig = plotting_modern.paired_differences_figure(rows, "difference")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert [len(line.get_xdata()) for line in dots] == [3, 2]
