"""Shared figure helpers for paradigm reports: estimates with intervals, trajectories, shares.

Figures are built on matplotlib's object API with an Agg canvas attached here, so nothing
touches pyplot or the global backend. Categories keep the order in which they first appear
in the frame: sort the frame to choose the order. `facet` draws small multiples (one panel per
level, shared axes) instead of one crowded panel; legends sit outside the data; long tick labels
slant; colours are Okabe-Ito and, past eight groups, also differ in hatch or marker, so no two
groups look alike.

Each helper keeps the frame it drew (`figure_data`), and marks each bar or point with a link
to its row (`ROW_URL` + the row's position), which the report resolves to the viewer's list of
that row's conversations and writes as the figure's CSV.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

# Okabe-Ito: distinguishable with the common colour-vision deficiencies (yellow, the faintest on
# white, last).
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#000000",
    "#F0E442",
)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")
LINESTYLES = ("-", "--", ":", "-.")
ROW_URL = "backchannel-row:"
"""A bar's or point's link before the report resolves it: this prefix and the row position."""
_DRAWN: weakref.WeakKeyDictionary[Figure, pd.DataFrame] = weakref.WeakKeyDictionary()
MAX_PANELS = 12
"""More facet levels than this make panels too small to read: the caller must split them."""


def _floor_at_zero(ax: Axes, *columns: pd.Series) -> None:
    """Non-negative data (shares, counts) start the axis at 0, and all-zero data still shows a
    readable scale instead of one centred on zero."""
    values = pd.concat([pd.to_numeric(c, errors="coerce") for c in columns]).dropna()
    if len(values) and (values >= 0).all():
        top = float(values.max())
        # An explicit top from all the data, so panels sharing the axis all show every point.
        ax.set_ylim(bottom=0, top=top * 1.05 if top > 0 else 1)


def figure_data(fig: Figure) -> pd.DataFrame | None:
    """The frame a helper of this module drew `fig` from (rows in the positions its links
    name), or None for a figure drawn otherwise."""
    return _DRAWN.get(fig)


def _drawn(fig: Figure, frame: pd.DataFrame) -> Figure:
    _DRAWN[fig] = frame
    return fig


def _link(artists: Sequence[Any], rows: pd.Index) -> None:
    """Link each bar to its row of the frame (positions, after `reset_index`)."""
    for artist, row in zip(artists, rows, strict=True):
        artist.set_url(f"{ROW_URL}{int(row)}")


def shared_ylim(frame: pd.DataFrame, *columns: str) -> tuple[float, float] | None:
    """One y range for every figure drawn from parts of `frame` (one figure per model, say),
    so they compare at a glance: from 0 (or the lowest value, if negative) to the highest of
    `columns`, with the margin the helpers give a single figure; None when nothing is finite."""
    values = pd.concat([pd.to_numeric(frame[c], errors="coerce") for c in columns]).dropna()
    values = values[np.isfinite(values)]
    if values.empty:
        return None
    low, high = min(0.0, float(values.min())), float(values.max())
    if high <= low:
        return (low, low + 1.0)
    return (low * 1.05 if low < 0 else 0.0, high * 1.05 if high > 0 else high)


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


def _hatch(index: int) -> str:
    """No hatch for the first eight groups; a distinct one for each further round of colours."""
    return HATCHES[(index // len(PALETTE)) % len(HATCHES)]


def _marker(index: int) -> str:
    return MARKERS[(index // len(PALETTE)) % len(MARKERS)]


def _linestyle(index: int) -> str:
    return LINESTYLES[(index // len(PALETTE)) % len(LINESTYLES)]


def _tick_labels(ax: Axes, positions: Sequence[float], labels: Sequence[object]) -> None:
    """Tick labels one part per line (`a=1, b=2` as two lines) when they fit side by side, else
    on one line each, slanted, so neighbours never overlap."""
    texts = [str(label) for label in labels]
    stacked = [text.replace(", ", "\n").replace(" vs ", " vs\n") for text in texts]
    widest = max((len(line) for text in stacked for line in text.splitlines()), default=0)
    figure = ax.get_figure()
    full = figure.get_figwidth() if isinstance(figure, Figure) else 7.0
    inches = ax.get_position().width * full
    width_chars = inches * 12
    if (widest + 2) * len(texts) <= width_chars:
        ax.set_xticks(list(positions), stacked)
        return
    ax.set_xticks(list(positions), [text.replace(" vs ", " vs\n") for text in texts])
    for tick in ax.get_xticklabels():
        tick.set_rotation(30 if widest <= 16 else 40)
        tick.set_horizontalalignment("right")
        tick.set_rotation_mode("anchor")


def _outside_legend(ax: Axes, title: str | None) -> None:
    """The legend to the right of the panel, never over the data."""
    ax.legend(title=title, frameon=False, bbox_to_anchor=(1.01, 1), loc="upper left")


def _panels(
    frame: pd.DataFrame, facet: str | None, title: str, *, sharey: bool = True
) -> list[tuple[Axes, pd.DataFrame, object]]:
    """A figure with one panel per level of `facet` (or one panel), each with its rows."""
    if facet is None:
        fig = _new_figure()
        ax = fig.add_subplot()
        ax.set_title(title)
        return [(ax, frame, None)]
    levels = _levels(frame[facet])
    if len(levels) > MAX_PANELS:
        raise ValueError(
            f"{len(levels)} levels of {facet} make panels too small; facet by another column "
            f"or split the frame (at most {MAX_PANELS})"
        )
    columns = min(3, len(levels))
    rows = math.ceil(len(levels) / columns)
    fig = _new_figure(width=3.4 * columns + 1.6, height=2.9 * rows + 0.6)
    axes = fig.subplots(rows, columns, sharey=sharey, squeeze=False).ravel()
    for extra in axes[len(levels) :]:
        extra.set_visible(False)
    fig.suptitle(title)
    panels = []
    for ax, level in zip(axes, levels, strict=False):
        ax.set_title(f"{facet} = {level}", fontsize="medium")
        panels.append((ax, frame[frame[facet] == level], level))
    return panels


def _legend(panels: list[tuple[Axes, pd.DataFrame, object]], title: str | None) -> None:
    """One legend outside the data: beside a single panel, or beside the whole grid."""
    if len(panels) == 1 and panels[0][2] is None:
        _outside_legend(panels[0][0], title)
        return
    handles: dict[str, Any] = {}
    for ax, _, _ in panels:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    figure = panels[0][0].get_figure()
    assert isinstance(figure, Figure)
    figure.legend(
        list(handles.values()),
        list(handles),
        title=title,
        frameon=False,
        loc="outside right upper",
    )


_ROUNDING = 1e-12


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
    facet: str | None = None,
    ylim: tuple[float, float] | None = None,
) -> Figure:
    """Bars of `y` per `x` (grouped by `hue`) with error bars from `low` to `high`; with
    `facet`, one panel per level of that column. `ylim` fixes the y range (small multiples
    drawn as separate figures share it: see `shared_ylim`)."""
    _require(frame, [x, y, low, high, hue, facet])
    frame = frame.reset_index(drop=True)
    keys = [k for k in (x, hue, facet) if k is not None]
    if frame.duplicated(subset=keys).any():
        raise ValueError(f"each ({', '.join(keys)}) combination must appear once")
    estimates = frame[y].to_numpy(dtype=float)
    below = estimates - frame[low].to_numpy(dtype=float)
    above = frame[high].to_numpy(dtype=float) - estimates
    # An interval computed apart from its estimate may miss it by rounding (Wilson at 0 of n
    # gives a low of 3e-17): that is drawn as touching it, anything more is refused.
    slack = _ROUNDING * np.maximum(1.0, np.abs(estimates))
    if np.any(below < -slack) or np.any(above < -slack):
        raise ValueError(f"every interval [{low}, {high}] must contain its {y}")
    categories = _levels(frame[x])
    groups: list[object] = [None] if hue is None else _levels(frame[hue])
    width = 0.8 / len(groups)
    position = {category: i for i, category in enumerate(categories)}
    panels = _panels(frame, facet, title)
    for ax, panel, _ in panels:
        for g, group in enumerate(groups):
            rows = panel if hue is None else panel[panel[hue] == group]
            centres = np.array([position[c] for c in rows[x]], dtype=float)
            offsets = centres - 0.4 + width * (g + 0.5)
            values = rows[y].to_numpy(dtype=float)
            errors = np.vstack(
                [
                    values - rows[low].to_numpy(dtype=float),
                    rows[high].to_numpy(dtype=float) - values,
                ]
            ).clip(min=0.0)
            bars = ax.bar(
                offsets,
                values,
                width * 0.92,
                yerr=errors,
                capsize=3,
                color=_color(g),
                hatch=_hatch(g),
                edgecolor="white" if not _hatch(g) else "#333333",
                label=None if hue is None else str(group),
                error_kw={"elinewidth": 1.1, "ecolor": "#333333"},
            )
            _link(bars.patches, rows.index)
        _tick_labels(ax, range(len(categories)), categories)
        _floor_at_zero(ax, frame[y], frame[low], frame[high])
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel(x)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    if hue is not None:
        _legend(panels, hue)
    figure = panels[0][0].get_figure()
    assert isinstance(figure, Figure)
    return _drawn(figure, frame)


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
    facet: str | None = None,
    ylim: tuple[float, float] | None = None,
) -> Figure:
    """One line of `y` over `x` (e.g. round) per `group`, with an optional shaded band; with
    `facet`, one panel per level of that column; `ylim` fixes the y range."""
    if (band_low is None) != (band_high is None):
        raise ValueError("give both band_low and band_high, or neither")
    _require(frame, [x, y, group, band_low, band_high, facet])
    frame = frame.reset_index(drop=True)
    groups: list[object] = [None] if group is None else _levels(frame[group])
    panels = _panels(frame, facet, title)
    for ax, panel, _ in panels:
        for g, level in enumerate(groups):
            rows = panel if group is None else panel[panel[group] == level]
            rows = rows.sort_values(x, kind="stable")
            if rows.empty:
                continue
            if rows[x].duplicated().any():
                raise ValueError(f"{x} repeats within a group; aggregate before plotting")
            xs = rows[x].to_numpy(dtype=float)
            label = None if group is None else str(level)
            ax.plot(
                xs,
                rows[y].to_numpy(dtype=float),
                marker=_marker(g),
                linestyle=_linestyle(g),
                color=_color(g),
                label=label,
            )
            points = ax.scatter(
                xs, rows[y].to_numpy(dtype=float), marker=_marker(g), color=_color(g), zorder=3
            )
            points.set_urls([f"{ROW_URL}{int(row)}" for row in rows.index])
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
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.set_xlabel(x)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    if group is not None:
        _legend(panels, group)
    figure = panels[0][0].get_figure()
    assert isinstance(figure, Figure)
    return _drawn(figure, frame)


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
    frame = frame.reset_index(drop=True)
    if frame[x].duplicated().any():
        raise ValueError(f"{x} must be unique: one bar per row")
    values = frame[list(stack_columns)].to_numpy(dtype=float)
    if np.any(values < 0):
        raise ValueError("stacked values must be >= 0")
    labels = [str(v) for v in frame[x]]
    positions = np.arange(len(frame))
    bottom = np.zeros(len(frame))
    # Long labels read best beside horizontal bars, first row on top.
    longest = max((len(label) for label in labels), default=0)
    horizontal = longest > 20
    if horizontal:
        fig = _new_figure(width=7.0 + 0.08 * longest, height=max(3.0, 1.4 + 0.42 * len(frame)))
    else:
        fig = _new_figure(width=max(7.0, 3.5 + 0.55 * len(frame)))
    ax = fig.add_subplot()
    for i, column in enumerate(stack_columns):
        style: dict[str, Any] = {
            "color": _color(i),
            "hatch": _hatch(i),
            "edgecolor": "white" if not _hatch(i) else "#333333",
            "label": column,
        }
        if horizontal:
            bars = ax.barh(positions, values[:, i], 0.7, left=bottom, **style)
        else:
            bars = ax.bar(positions, values[:, i], 0.7, bottom=bottom, **style)
        _link(bars.patches, frame.index)
        bottom = bottom + values[:, i]
    ax.set_title(title)
    if horizontal:
        ax.set_yticks(positions.tolist(), labels)
        ax.invert_yaxis()
        ax.set_ylabel(x)
        ax.set_xlabel(ylabel)
        ax.grid(axis="x", alpha=0.3)
    else:
        _tick_labels(ax, positions.tolist(), labels)
        ax.set_xlabel(x)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    _outside_legend(ax, None)
    return _drawn(fig, frame)
