"""Figure helpers: the drawn bars, lines and bands carry exactly the frame's numbers."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from backchannel.report import bar_with_intervals, line_over_rounds, stacked_bars

FLIPS = pd.DataFrame(
    {
        "model": ["a", "b", "a", "b"],
        "k": [1, 1, 3, 3],
        "flip_rate": [0.1, 0.2, 0.3, 0.4],
        "low": [0.05, 0.1, 0.2, 0.3],
        "high": [0.2, 0.3, 0.4, 0.5],
    }
)


def test_bar_with_intervals_groups_by_hue() -> None:
    fig = bar_with_intervals(
        FLIPS, "model", "flip_rate", "low", "high", hue="k", title="Flips", ylabel="rate"
    )
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert len(bars) == 2  # one container per hue level, in order of appearance: k=1, k=3
    # Two hue levels -> bar slot width 0.8 / 2 = 0.4; centres at category -0.2 and +0.2.
    centres = [[p.get_x() + p.get_width() / 2 for p in c.patches] for c in bars]
    np.testing.assert_allclose(centres, [[-0.2, 0.8], [0.2, 1.2]])
    heights = [[p.get_height() for p in c.patches] for c in bars]
    np.testing.assert_allclose(heights, [[0.1, 0.2], [0.3, 0.4]])
    # Error bars run from low to high: k=1 -> a: 0.05..0.2, b: 0.1..0.3.
    segments = bars[0].errorbar.lines[2][0].get_segments()
    spans = [(seg[0][1], seg[1][1]) for seg in segments]
    np.testing.assert_allclose(spans, [(0.05, 0.2), (0.1, 0.3)])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
    assert ax.get_title() == "Flips"
    assert ax.get_legend().get_title().get_text() == "k"


def test_bar_without_hue_and_validation() -> None:
    one = FLIPS[FLIPS["k"] == 1]
    fig = bar_with_intervals(one, "model", "flip_rate", "low", "high", title="t", ylabel="r")
    assert [p.get_height() for p in fig.axes[0].patches] == pytest.approx([0.1, 0.2])
    with pytest.raises(ValueError, match="once"):
        bar_with_intervals(FLIPS, "model", "flip_rate", "low", "high", title="t", ylabel="r")
    bad = one.assign(high=[0.05, 0.3])  # 0.05 < estimate 0.1
    with pytest.raises(ValueError, match="contain"):
        bar_with_intervals(bad, "model", "flip_rate", "low", "high", title="t", ylabel="r")
    with pytest.raises(ValueError, match="missing columns: nope"):
        bar_with_intervals(one, "model", "nope", "low", "high", title="t", ylabel="r")


def test_line_over_rounds_sorts_rounds_and_draws_bands() -> None:
    frame = pd.DataFrame(
        {
            "round": [2, 0, 1, 0, 1, 2],
            "arm": ["x", "x", "x", "y", "y", "y"],
            "agree": [0.6, 0.2, 0.4, 0.5, 0.5, 0.5],
            "lo": [0.5, 0.1, 0.3, 0.4, 0.4, 0.4],
            "hi": [0.7, 0.3, 0.5, 0.6, 0.6, 0.6],
        }
    )
    fig = line_over_rounds(
        frame, "round", "agree", "arm", title="t", ylabel="y", band_low="lo", band_high="hi"
    )
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert len(lines) == 2
    # Group x is drawn in round order 0, 1, 2 -> agree 0.2, 0.4, 0.6.
    np.testing.assert_allclose(lines[0].get_xdata(), [0, 1, 2])
    np.testing.assert_allclose(lines[0].get_ydata(), [0.2, 0.4, 0.6])
    np.testing.assert_allclose(lines[1].get_ydata(), [0.5, 0.5, 0.5])
    from matplotlib.collections import FillBetweenPolyCollection, PathCollection

    bands = [c for c in ax.collections if isinstance(c, FillBetweenPolyCollection)]
    assert len(bands) == 2  # one band per group
    # Each point is also a marker linked to its row (the report resolves the links).
    points = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert [u for c in points for u in c.get_urls()] == [
        f"backchannel-row:{i}" for i in (1, 2, 0, 3, 4, 5)
    ]
    band_y = bands[0].get_paths()[0].vertices[:, 1]
    # The x band spans from the lowest lo (0.1) to the highest hi (0.7).
    assert band_y.min() == pytest.approx(0.1)
    assert band_y.max() == pytest.approx(0.7)
    with pytest.raises(ValueError, match="both"):
        line_over_rounds(frame, "round", "agree", "arm", title="t", ylabel="y", band_low="lo")
    with pytest.raises(ValueError, match="repeats"):
        line_over_rounds(frame, "round", "agree", None, title="t", ylabel="y")


def test_stacked_bars_stack_in_column_order() -> None:
    frame = pd.DataFrame({"model": ["a", "b"], "agree": [0.2, 0.5], "refuse": [0.8, 0.5]})
    fig = stacked_bars(frame, "model", ["agree", "refuse"], title="t", ylabel="share")
    patches = fig.axes[0].patches
    # agree bars sit on 0; refuse bars sit on top of agree: bottoms 0.2 and 0.5, tops 1.0.
    assert [p.get_y() for p in patches] == pytest.approx([0, 0, 0.2, 0.5])
    assert [p.get_y() + p.get_height() for p in patches] == pytest.approx([0.2, 0.5, 1.0, 1.0])
    with pytest.raises(ValueError, match=">= 0"):
        stacked_bars(frame.assign(agree=[-0.1, 0.5]), "model", ["agree"], title="t", ylabel="s")
    with pytest.raises(ValueError, match="unique"):
        stacked_bars(pd.concat([frame, frame]), "model", ["agree"], title="t", ylabel="s")


def test_helpers_leave_pyplot_state_alone() -> None:
    before = plt.get_fignums()
    stacked_bars(pd.DataFrame({"m": ["a"], "v": [1.0]}), "m", ["v"], title="t", ylabel="s")
    assert plt.get_fignums() == before


def test_non_negative_shares_start_at_zero_and_all_zero_data_has_a_readable_scale() -> None:
    from backchannel.report import bar_with_intervals, line_over_rounds

    zeros = pd.DataFrame({"k": [0, 1], "fpi": [0.0, 0.0], "low": [0.0, 0.0], "high": [0.0, 0.0]})
    bars = bar_with_intervals(zeros, "k", "fpi", "low", "high", title="t", ylabel="share")
    assert bars.axes[0].get_ylim() == (0.0, 1.0)
    rising = pd.DataFrame({"checkpoint": [0, 1, 2], "infection": [0.0, 0.2, 0.4]})
    line = line_over_rounds(rising, "checkpoint", "infection", None, title="t", ylabel="share")
    low, high = line.axes[0].get_ylim()
    assert low == 0.0 and high >= 0.4


def test_facets_draw_one_panel_per_level_with_one_legend_outside() -> None:
    frame = FLIPS.assign(dataset=["d1", "d1", "d2", "d2"])
    fig = bar_with_intervals(
        frame,
        "model",
        "flip_rate",
        "low",
        "high",
        hue="model",
        title="t",
        ylabel="r",
        facet="dataset",
    )
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["dataset = d1", "dataset = d2"]
    # Each panel carries only its level's rows: d1 has k=1 (0.1, 0.2), d2 has k=3 (0.3, 0.4).
    heights = [sorted(p.get_height() for p in ax.patches) for ax in visible]
    np.testing.assert_allclose(heights, [[0.1, 0.2], [0.3, 0.4]])
    assert visible[0].get_ylim() == visible[1].get_ylim()  # shared axis
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in visible)
    with pytest.raises(ValueError, match="too small"):
        many = pd.DataFrame({"x": ["a"] * 13, "y": 0.5, "f": range(13)})
        bar_with_intervals(many, "x", "y", "y", "y", title="t", ylabel="r", facet="f")


def test_many_groups_never_share_a_style_and_legends_sit_outside() -> None:
    groups = [f"g{i}" for i in range(12)]
    frame = pd.DataFrame({"round": 1, "arm": groups, "agree": 0.5})
    fig = line_over_rounds(frame, "round", "agree", "arm", title="t", ylabel="y")
    styles = {(ln.get_color(), ln.get_marker(), ln.get_linestyle()) for ln in fig.axes[0].lines}
    assert len(styles) == 12
    shares = pd.DataFrame({"cell": ["a"], **{g: [1 / 12] for g in groups}})
    bars = stacked_bars(shares, "cell", groups, title="t", ylabel="s")
    looks = {(tuple(p.get_facecolor()), p.get_hatch()) for p in bars.axes[0].patches}
    assert len(looks) == 12
    legend = fig.axes[0].get_legend()
    fig.canvas.draw()
    # The legend box starts right of the data area.
    assert legend.get_window_extent().x0 >= fig.axes[0].get_window_extent().x1


def test_long_labels_slant_or_turn_the_bars_horizontal() -> None:
    labels = [f"model=some/long-model-name-{i}, dataset=counterfact" for i in range(4)]
    frame = pd.DataFrame({"cell": labels, "a": [0.5] * 4, "b": [0.5] * 4})
    fig = stacked_bars(frame, "cell", ["a", "b"], title="t", ylabel="share")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == labels  # horizontal bars
    bars = bar_with_intervals(
        frame.assign(low=0.4, high=0.6), "cell", "a", "low", "high", title="t", ylabel="r"
    )
    assert all(t.get_rotation() > 0 for t in bars.axes[0].get_xticklabels())
    short = bar_with_intervals(
        FLIPS[FLIPS["k"] == 1], "model", "flip_rate", "low", "high", title="t", ylabel="r"
    )
    assert all(t.get_rotation() == 0 for t in short.axes[0].get_xticklabels())


def test_an_interval_that_misses_its_estimate_by_rounding_touches_it() -> None:
    # statsmodels' Wilson interval for 0 of 7 starts at 2.8e-17 and for 7 of 7 ends at
    # 0.9999999999999999: drawn as touching the estimate, not refused.
    frame = pd.DataFrame(
        {
            "x": ["none", "all"],
            "rate": [0.0, 1.0],
            "low": [2.8e-17, 0.65],
            "high": [0.35, 1 - 1e-16],
        }
    )
    fig = bar_with_intervals(frame, "x", "rate", "low", "high", title="t", ylabel="r")
    assert [p.get_height() for p in fig.axes[0].patches] == pytest.approx([0.0, 1.0])
    with pytest.raises(ValueError, match="contain"):
        far = frame.assign(low=[1e-6, 0.65])
        bar_with_intervals(far, "x", "rate", "low", "high", title="t", ylabel="r")


def test_figures_drawn_apart_share_one_y_range() -> None:
    from backchannel.report import shared_ylim

    frame = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "x": ["p", "q", "p", "q"],
            "y": [0.1, 0.12, 0.4, 0.5],
            "lo": [0.05, 0.1, 0.3, 0.45],
            "hi": [0.11, 0.2, 0.45, 0.6],
        }
    )
    limits = shared_ylim(frame, "y", "lo", "hi")
    assert limits == pytest.approx((0.0, 0.63))  # 0 to the highest bound, 5 % above
    figures = [
        bar_with_intervals(part, "x", "y", "lo", "hi", title=m, ylabel="r", ylim=limits)
        for m, part in frame.groupby("model")
    ]
    # Model a alone would end at 0.21 and b at 0.63: drawn apart, both span 0-0.63.
    assert [f.axes[0].get_ylim() for f in figures] == [pytest.approx((0.0, 0.63))] * 2
    assert shared_ylim(frame.assign(y=[-1.0, 0, 1, 2]), "y") == pytest.approx((-1.05, 2.1))
    assert shared_ylim(frame.assign(y=float("nan")), "y") is None
