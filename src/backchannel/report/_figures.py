"""Shared figure helpers for paradigm reports: estimates with intervals, trajectories, shares.

Figures are built on matplotlib's object API with an Agg canvas attached here, so nothing
touches pyplot or the global backend. Categories keep the order in which they first appear
in the frame: sort the frame to choose the order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
)


def _floor_at_zero(ax: Axes, *columns: pd.Series) -> None:
    """Non-negative data (shares, counts) start the axis at 0, and all-zero data still shows a
    readable scale instead of one centred on zero."""
    values = pd.concat([pd.to_numeric(c, errors="coerce") for c in columns]).dropna()
    if len(values) and (values >= 0).all():
        top = float(values.max())
        ax.set_ylim(bottom=0, top=None if top > 0 else 1)


def _new_figure(width: float = 7.0, height: float = 4.0) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _require(frame: pd.DataFrame, columns: Sequence[str | None]) -> None:
    missing = [c for c in columns if c is not None and c not in frame.columns]
    if missing:
        raise ValueError(f"missing columns: {', '.join(missing)}")


def _levels(series: pd.Series) -> list[object]:
    return list(pd.unique(series))


def _color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def bar_with_intervals(
    frame: pd.DataFrame,
    x: str,
    y: str,
    low: str,
    high: str,
    hue: str | None = None,
    *,
    title: str,
    ylabel: str,
) -> Figure:
    """Bars of `y` per `x` (grouped by `hue`) with error bars from `low` to `high`."""
    _require(frame, [x, y, low, high, hue])
    keys = [x] if hue is None else [x, hue]
    if frame.duplicated(subset=keys).any():
        raise ValueError(f"each ({', '.join(keys)}) combination must appear once")
    estimates = frame[y].to_numpy(dtype=float)
    below = estimates - frame[low].to_numpy(dtype=float)
    above = frame[high].to_numpy(dtype=float) - estimates
    if np.any(below < 0) or np.any(above < 0):
        raise ValueError(f"every interval [{low}, {high}] must contain its {y}")
    categories = _levels(frame[x])
    groups: list[object] = [None] if hue is None else _levels(frame[hue])
    width = 0.8 / len(groups)
    fig = _new_figure()
    ax = fig.add_subplot()
    for g, group in enumerate(groups):
        rows = frame if hue is None else frame[frame[hue] == group]
        position = {category: i for i, category in enumerate(categories)}
        centres = np.array([position[c] for c in rows[x]], dtype=float)
        offsets = centres - 0.4 + width * (g + 0.5)
        values = rows[y].to_numpy(dtype=float)
        errors = np.vstack(
            [values - rows[low].to_numpy(dtype=float), rows[high].to_numpy(dtype=float) - values]
        )
        ax.bar(
            offsets,
            values,
            width * 0.92,
            yerr=errors,
            capsize=3,
            color=_color(g),
            label=None if hue is None else str(group),
            error_kw={"elinewidth": 1.1, "ecolor": "#333333"},
        )
    ax.set_xticks(range(len(categories)), [str(c) for c in categories])
    _floor_at_zero(ax, frame[y], frame[low], frame[high])
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    if hue is not None:
        ax.legend(title=hue, frameon=False)
    return fig


def line_over_rounds(
    frame: pd.DataFrame,
    x: str,
    y: str,
    group: str | None,
    *,
    title: str,
    ylabel: str,
    band_low: str | None = None,
    band_high: str | None = None,
) -> Figure:
    """One line of `y` over `x` (e.g. round) per `group`, with an optional shaded band."""
    if (band_low is None) != (band_high is None):
        raise ValueError("give both band_low and band_high, or neither")
    _require(frame, [x, y, group, band_low, band_high])
    fig = _new_figure()
    ax = fig.add_subplot()
    groups: list[object] = [None] if group is None else _levels(frame[group])
    for g, level in enumerate(groups):
        rows = frame if group is None else frame[frame[group] == level]
        rows = rows.sort_values(x, kind="stable")
        if rows[x].duplicated().any():
            raise ValueError(f"{x} repeats within a group; aggregate before plotting")
        xs = rows[x].to_numpy(dtype=float)
        label = None if group is None else str(level)
        ax.plot(xs, rows[y].to_numpy(dtype=float), marker="o", color=_color(g), label=label)
        if band_low is not None and band_high is not None:
            ax.fill_between(
                xs,
                rows[band_low].to_numpy(dtype=float),
                rows[band_high].to_numpy(dtype=float),
                color=_color(g),
                alpha=0.18,
                linewidth=0,
            )
    if pd.api.types.is_integer_dtype(frame[x]):
        ax.set_xticks(sorted(pd.unique(frame[x])))
    bands = [frame[c] for c in (band_low, band_high) if c is not None]
    _floor_at_zero(ax, frame[y], *bands)
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if group is not None:
        ax.legend(title=group, frameon=False)
    return fig


def stacked_bars(
    frame: pd.DataFrame,
    x: str,
    stack_columns: Sequence[str],
    *,
    title: str,
    ylabel: str,
) -> Figure:
    """One bar per row of `frame`, stacked from `stack_columns` (e.g. label shares)."""
    if not stack_columns:
        raise ValueError("stack_columns must name at least one column")
    _require(frame, [x, *stack_columns])
    if frame[x].duplicated().any():
        raise ValueError(f"{x} must be unique: one bar per row")
    values = frame[list(stack_columns)].to_numpy(dtype=float)
    if np.any(values < 0):
        raise ValueError("stacked values must be >= 0")
    fig = _new_figure()
    ax = fig.add_subplot()
    positions = np.arange(len(frame))
    bottom = np.zeros(len(frame))
    for i, column in enumerate(stack_columns):
        ax.bar(positions, values[:, i], 0.7, bottom=bottom, color=_color(i), label=column)
        bottom = bottom + values[:, i]
    ax.set_xticks(positions, [str(v) for v in frame[x]])
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.legend(frameon=False, bbox_to_anchor=(1.01, 1), loc="upper left")
    return fig
