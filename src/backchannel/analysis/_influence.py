"""The Friedkin-Johnsen baseline: how far each model's opinions follow its neighbours' expressed
opinions, how far they hold to its initial one, fitted per cell and model on each channel.

The form fitted, for agent i at round t >= 1 on one channel (private or public):

    x_i(t) = a * m_i(t) + s * x_i(0) + (1 - a - s) * x_i(t - 1)

with m_i(t) the mean of i's neighbours' latest expressed opinions among the turns i had seen
when its round-t opinion was read. a is the susceptibility (the weight on the neighbours), s the
stubbornness (the weight on the initial opinion, FJ's prejudice), 1 - a - s the inertia (the
weight on its own last opinion). In the FJ notation x(t) = L W x(t-1) + (I - L) x(0) with equal
weights on the neighbours heard: L = 1 - s and the self-weight w_ii = (1 - a - s) / (1 - s).
It is fitted as x(t) - x(t-1) = a (m - x(t-1)) + s (x(0) - x(t-1)) by least squares with
0 <= a, s <= 1 (`scipy.optimize.lsq_linear`); the no-influence baseline is the same fit with
a = 0. Intervals are percentile bootstraps over conversations (seeded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis._influence_results import Influence, InfluenceRow
from backchannel.analysis._records import IntervalRecord
from backchannel.analysis._typed import cell_groups
from backchannel.seeding import derive_seed

OPINION_COLUMNS = (
    "conversation_id",
    "agent",
    "model",
    "round",
    "private",
    "public",
    "neighbours_private",
    "neighbours_public",
)
"""One row per (conversation, agent, round 0..T) of an opinion-trajectory frame:

- `model`: the agent's model; `round`: 0 is the agent's opinion before any turn.
- `private`: its private opinion read at checkpoint `round` (after that round).
- `public`: the opinion its turn of that round expressed; at round 0 the opinion it holds
  before it has spoken (its private initial opinion where the paradigm has no other reading).
- `neighbours_private` / `neighbours_public`: the mean of its neighbours' latest expressed
  opinions among the turns it had seen when its private opinion was read / when it spoke
  in that round (NaN when it had seen none).

Opinions are numbers on one scale per paradigm (a 0/1 answer, a 0..6 rating); a missing one
(an unreadable answer) is NaN and the transitions that need it are counted as missing.
"""

CHANNELS = ("private", "public")
FORM = "x(t) = a·m(t) + s·x(0) + (1 − a − s)·x(t − 1)"
RESAMPLES = 1000


def transitions(frame: pd.DataFrame, channel: str) -> pd.DataFrame:
    """The rows of `frame` at round >= 1 with the values the fit of `channel` reads: `y` (the
    opinion), `previous` (the round before), `initial` (round 0) and `neighbours`, and the
    agent's model as `agent_model`."""
    if channel not in CHANNELS:
        raise ValueError(f"channel is one of {CHANNELS}, got {channel!r}")
    missing = [c for c in OPINION_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"an opinion-trajectory frame lacks the columns {missing}")
    data = frame.sort_values(["conversation_id", "agent", "round"]).reset_index(drop=True)
    values = pd.to_numeric(data[channel], errors="coerce").astype(float)
    keys = _agent_keys(data["conversation_id"].astype(str), data["agent"].astype(str))
    rounds = data["round"].astype(int)
    previous = values.groupby(keys).shift(1)
    previous_round = rounds.groupby(keys).shift(1)
    previous = previous.where(previous_round == rounds - 1)
    initial = values.where(rounds == 0).groupby(keys).transform("max")
    out = data[["conversation_id", "agent", "round"]].copy()
    out["agent_model"] = data["model"].astype(str)
    out["y"] = values
    out["previous"] = previous
    out["initial"] = initial
    out["neighbours"] = pd.to_numeric(data[f"neighbours_{channel}"], errors="coerce")
    return out[rounds >= 1].reset_index(drop=True)


def _agent_keys(conversations: pd.Series, agents: pd.Series) -> list[pd.Series] | np.ndarray:
    """One integer per (conversation, agent), to group by in place of the two text columns
    (each group-by would factorize them again); the columns themselves when one is missing."""
    first, _ = pd.factorize(conversations)
    second, seconds = pd.factorize(agents)
    if (first < 0).any() or (second < 0).any():
        return [conversations, agents]
    return np.asarray(first, dtype=np.int64) * max(1, len(seconds)) + second


def products(
    y: np.ndarray, previous: np.ndarray, initial: np.ndarray, neighbours: np.ndarray
) -> np.ndarray:
    """The cross products of the columns (m - x(t-1), x(0) - x(t-1), x(t) - x(t-1)): all the
    least-squares fit reads, and they add over conversations (so a bootstrap resample is a sum)."""
    columns = np.column_stack([neighbours - previous, initial - previous, y - previous])
    return np.asarray(columns.T @ columns, dtype=float)


def fit_products(cross: np.ndarray) -> tuple[float, float, float, float]:
    """(a, s, SSE, SSE of the fit with a = 0) from `products`: `scipy.optimize.lsq_linear` on
    the equivalent problem ||R x - R^-T c|| (R the Cholesky factor of the regressors' cross
    products), whose minimiser is the bounded least-squares one."""
    from scipy.optimize import lsq_linear

    gram, c, total = cross[:2, :2], cross[:2, 2], float(cross[2, 2])
    upper = np.linalg.cholesky(gram).T
    target = np.linalg.solve(upper.T, c)
    x = lsq_linear(upper, target, bounds=([0.0, 0.0], [1.0, 1.0]), method="bvls").x
    sse = total - 2.0 * float(x @ c) + float(x @ gram @ x)
    s0 = min(1.0, max(0.0, float(c[1] / gram[1, 1])))  # one bounded coefficient: clip the OLS
    sse_base = total - 2.0 * s0 * float(c[1]) + s0 * s0 * float(gram[1, 1])
    return float(x[0]), float(x[1]), max(0.0, sse), max(0.0, sse_base)


def box_fits(cross: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`fit_products` for a stack of cross products (shape (n, 3, 3)) at once, as the bootstrap
    needs: the least-squares objective is convex, so its minimum on the box [0, 1]^2 is the
    unconstrained one when inside, else the best of the four edges' clipped minima. The tests
    check it against `lsq_linear`."""
    g11, g12, g22 = cross[:, 0, 0], cross[:, 0, 1], cross[:, 1, 1]
    c1, c2, total = cross[:, 0, 2], cross[:, 1, 2], cross[:, 2, 2]

    def sse(a: np.ndarray, s: np.ndarray) -> np.ndarray:
        return total - 2 * (a * c1 + s * c2) + a * a * g11 + 2 * a * s * g12 + s * s * g22

    with np.errstate(divide="ignore", invalid="ignore"):
        det = g11 * g22 - g12 * g12
        free_a, free_s = (g22 * c1 - g12 * c2) / det, (g11 * c2 - g12 * c1) / det
        candidates = [(free_a, free_s)]
        for fixed in (0.0, 1.0):
            edge_s = np.clip((c2 - fixed * g12) / g22, 0.0, 1.0)  # a fixed, best s
            edge_a = np.clip((c1 - fixed * g12) / g11, 0.0, 1.0)  # s fixed, best a
            candidates += [(np.full_like(c1, fixed), edge_s), (edge_a, np.full_like(c1, fixed))]
    best_a, best_s = np.full_like(c1, np.nan), np.full_like(c1, np.nan)
    best = np.full_like(c1, np.inf)
    for a, s in candidates:
        inside = (a >= 0) & (a <= 1) & (s >= 0) & (s <= 1)
        value = np.where(inside, sse(a, s), np.inf)
        better = value < best
        best_a, best_s, best = (
            np.where(better, a, best_a),
            np.where(better, s, best_s),
            np.where(better, value, best),
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        base_s = np.clip(c2 / g22, 0.0, 1.0)
    base = total - 2 * base_s * c2 + base_s * base_s * g22
    return best_a, best_s, np.maximum(best, 0.0), np.maximum(base, 0.0)


def _separable(cross: np.ndarray) -> np.ndarray:
    """Whether each stack entry's regressor cross products are of full rank (both weights
    identified); one matrix gives one flag."""
    gram = cross[..., :2, :2]
    scale = np.maximum(np.max(np.abs(gram), axis=(-2, -1)), 1e-300)
    return np.asarray(np.linalg.cond(gram / scale[..., None, None]) < 1e10)


def _reduction(sse: float, sse_base: float) -> float | None:
    return None if sse_base <= 0 else 1.0 - sse / sse_base


def _interval(
    estimate: float | None, draws: Sequence[float], n: int, skipped: str | None, missing: int
) -> IntervalRecord:
    if skipped is not None or estimate is None:
        return IntervalRecord(
            estimate=None, low=None, high=None, n=n, skipped=skipped, missing=missing
        )
    finite = np.asarray([d for d in draws if np.isfinite(d)], dtype=float)
    if len(finite) == 0:
        return IntervalRecord(
            estimate=estimate,
            low=None,
            high=None,
            n=n,
            skipped="no bootstrap resample could be fitted",
            missing=missing,
        )
    low, high = np.percentile(finite, [2.5, 97.5])
    return IntervalRecord(
        estimate=estimate, low=float(low), high=float(high), n=n, skipped=None, missing=missing
    )


CHUNK = 100
"""Bootstrap resamples drawn at once (bounds the memory of a large cell's resampling)."""


def _chunks(total: int, size: int) -> list[int]:
    return [min(size, total - start) for start in range(0, total, size)]


def _resample_counts(rng: np.random.Generator, units: int, resamples: int) -> np.ndarray:
    """How often each of `units` conversations is drawn in each of `resamples` resamples."""
    picked = rng.integers(0, units, size=(resamples, units))
    cells = (np.arange(resamples)[:, None] * units + picked).ravel()  # (resample, unit) flat
    counts = np.bincount(cells, minlength=resamples * units).reshape(resamples, units)
    return counts.astype(float)


def _why_not(cross: np.ndarray, transitions: int, conversations: int) -> str | None:
    if transitions == 0:
        return "no transitions with an opinion, the round before, round 0 and the neighbours"
    if conversations < 2:
        return "fewer than 2 conversations: no bootstrap over conversations"
    if not bool(_separable(cross)):
        return (
            "the neighbours' and the initial opinions do not vary apart from the agent's last "
            "one: susceptibility and stubbornness cannot be told apart"
        )
    return None


def fit_group(data: pd.DataFrame, *, resamples: int = RESAMPLES, seed: int = 0) -> dict[str, Any]:
    """The fit of one group of `transitions` rows, with its bootstrap over conversations."""
    usable = data.dropna(subset=["y", "previous", "initial", "neighbours"])
    missing = len(data) - len(usable)
    ids = usable["conversation_id"].astype(str).to_numpy()
    columns = [usable[c].to_numpy(dtype=float) for c in ("y", "previous", "initial", "neighbours")]
    codes, unique = pd.factorize(ids, sort=True)  # np.unique's, hashing not sorting the rows
    y, previous, initial, neighbours = columns
    regressors = np.column_stack([neighbours - previous, initial - previous, y - previous])
    outer = regressors[:, :, None] * regressors[:, None, :]  # each transition's products
    per_conversation = np.zeros((len(unique), 3, 3))
    np.add.at(per_conversation, codes, outer)
    whole = per_conversation.sum(axis=0)
    skipped = _why_not(whole, len(usable), len(unique))
    figures: dict[str, Any] = {
        "conversations": int(data["conversation_id"].astype(str).nunique()),
        "agents": len(data[["conversation_id", "agent"]].drop_duplicates()),
        "transitions": len(usable),
        "missing": missing,
        "resamples": resamples,
        "seed": seed,
        "skipped": skipped,
    }
    a = s = reduction = None
    draws: dict[str, list[float]] = {"a": [], "s": [], "reduction": []}
    if skipped is None:
        a, s, sse, sse_base = fit_products(whole)
        reduction = _reduction(sse, sse_base)
        n = len(usable)
        figures["rmse"] = float(np.sqrt(sse / n))
        figures["baseline_rmse"] = float(np.sqrt(sse_base / n))
        figures["inertia"] = 1.0 - a - s
        rng = np.random.default_rng(seed)
        flat = per_conversation.reshape(len(unique), 9)
        resampled = np.concatenate(
            [_resample_counts(rng, len(unique), size) @ flat for size in _chunks(resamples, CHUNK)]
        ).reshape(resamples, 3, 3)
        ok = _separable(resampled)
        ba, bs, bsse, bbase = box_fits(resampled[ok])
        draws["a"], draws["s"] = ba.tolist(), bs.tolist()
        with np.errstate(divide="ignore", invalid="ignore"):
            draws["reduction"] = np.where(bbase > 0, 1.0 - bsse / bbase, np.nan).tolist()
    else:
        figures.update(rmse=None, baseline_rmse=None, inertia=None)
    n = figures["conversations"]
    figures["susceptibility"] = _interval(a, draws["a"], n, skipped, missing)
    figures["stubbornness"] = _interval(s, draws["s"], n, skipped, missing)
    figures["error_reduction"] = _interval(
        reduction,
        draws["reduction"],
        n,
        skipped or (None if reduction is not None else "the no-influence fit has no error"),
        missing,
    )
    return figures


def fit_influence(
    frame: pd.DataFrame,
    levels: Mapping[str, Mapping[str, Any]],
    factors: Sequence[str],
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Influence:
    """The FJ fit per cell of `factors` (each conversation's levels in `levels`, as
    `Design.levels` reads them), agent model and channel, on an opinion-trajectory frame."""
    rows: list[InfluenceRow] = []
    for channel in CHANNELS:
        data = transitions(frame, channel)
        for cell, group in cell_groups(data, [*factors, "agent_model"], levels):
            model = str(cell.pop("agent_model"))
            group_seed = derive_seed(seed, channel, model, sorted(cell.items()))
            figures = fit_group(group, resamples=resamples, seed=group_seed)
            rows.append(
                InfluenceRow.model_validate(
                    {**cell, "agent_model": model, "channel": channel, **figures}
                )
            )
    return Influence(form=FORM, rows=rows)
