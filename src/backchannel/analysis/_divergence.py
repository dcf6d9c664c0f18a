"""Say versus believe: how often an agent's public stance and its private answer part ways.

A paradigm reads its two channels into stance pairs (`STANCE_PAIR_COLUMNS`, one row per public
turn and the nearest private probe of the same agent on the same question); this module turns
them into the kit's divergence measures, per cell, round and role, with intervals that respect
the clustering of pairs within conversations and tests between cells. Definitions:
docs/divergence.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from backchannel.analysis._divergence_results import Divergence, DivergenceRow, DivergenceTest
from backchannel.analysis._json import finite_or_none
from backchannel.analysis._multiple import holm
from backchannel.analysis._records import IntervalRecord
from backchannel.analysis._results import Interval, TestResult, skipped_interval
from backchannel.analysis._tests import mann_whitney_u, wilcoxon_signed_rank
from backchannel.analysis._texts import texts_in
from backchannel.analysis._typed import cell_groups

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis._typed import Design

STANCE_PAIR_COLUMNS: tuple[str, ...] = (
    "conversation_id",
    "agent",
    "role",
    "round",
    "turn_seq",
    "probe_seq",
    "public_moved",
    "private_moved",
    "agree",
    "skipped",
)
"""The columns of a stance-pairs frame (`Paradigm.stance_pairs`), in order."""

FLAGS = ("public_moved", "private_moved", "agree")
MEASURES = ("agree", "hidden_change", "public_accommodation", "both_moved", "divergent")
"""The shares every divergence row carries, in order."""
TESTED = ("hidden_change", "public_accommodation", "divergent")
"""The shares compared between cells."""
INTERVAL_METHOD = "wilson, clustered by conversation (design-effect effective n)"
PAIRED_TEST = "wilcoxon_signed_rank"
UNPAIRED_TEST = "mann_whitney_u"


def check_stance_pairs(pairs: pd.DataFrame) -> None:
    """Raise ValueError when `pairs` breaks the stance-pairs contract: a missing column, a
    classified pair with a missing flag, or a skipped pair with a flag set."""
    missing = [c for c in STANCE_PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise ValueError(f"stance pairs lack the column(s) {', '.join(missing)}")
    skipped = pairs["skipped"].notna()
    flags = pairs[list(FLAGS)]
    unflagged = ~skipped & flags.isna().any(axis=1)
    if unflagged.any():
        raise ValueError(
            f"{int(unflagged.sum())} stance pair(s) have no skipped reason but a missing flag"
        )
    flagged = skipped & flags.notna().any(axis=1)
    if flagged.any():
        raise ValueError(f"{int(flagged.sum())} skipped stance pair(s) still carry a flag")


def classify_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """The measures of every pair as nullable booleans (NA for a skipped pair): `agree`,
    `hidden_change` (private moved toward the pressure, public did not), `public_accommodation`
    (public moved, private did not), `both_moved` and `divergent` (either of the first two)."""
    import pandas as pd

    public = pairs["public_moved"].astype("boolean")
    private = pairs["private_moved"].astype("boolean")
    hidden = private & ~public
    accommodation = public & ~private
    return pd.DataFrame(
        {
            "agree": pairs["agree"].astype("boolean"),
            "hidden_change": hidden,
            "public_accommodation": accommodation,
            "both_moved": public & private,
            "divergent": hidden | accommodation,
        },
        index=pairs.index,
    )


def divergent_turns(pairs: pd.DataFrame) -> pd.Series:
    """Which pairs are divergent turns (hidden change or public accommodation): True or False
    for every row, False for a skipped pair. The one definition the metrics and the viewer
    share."""
    return classify_pairs(pairs)["divergent"].fillna(False).astype(bool)


def clustered_proportion_ci(
    values: Sequence[bool] | np.ndarray,
    clusters: Sequence[Any] | np.ndarray,
    *,
    confidence: float = 0.95,
) -> Interval:
    """Wilson interval for a proportion of binary units that come in clusters (conversations).

    The design effect is the ratio of the cluster-robust variance of the share, Σ_g (Σ_i
    (y_gi - p))² / n² (statsmodels' OLS of an intercept with `cov_type="cluster"` and no
    small-sample correction), to the binomial p(1-p)/n; the Wilson interval is taken at the
    effective size n / deff, capped at n (Korn & Graubard 1998). One unit per cluster gives
    deff = 1: the plain Wilson interval. At p = 0 or 1 there is no spread to estimate the
    design effect from, so the worst case (every unit of a cluster alike) sets the effective
    size: n² / Σ n_g². Fewer than two clusters: skipped.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    y = np.asarray(values, dtype=float)
    groups = np.asarray(clusters)
    if len(y) != len(groups):
        raise ValueError("values and clusters differ in length")
    n = len(y)
    if n == 0:
        return skipped_interval("no classified pairs", 0)
    p = float(y.mean())
    import pandas as pd

    codes, _ = pd.factorize(groups, sort=True)  # np.unique's codes, without sorting every row
    sizes = np.bincount(codes)
    g = len(sizes)
    if g < 2:
        return skipped_interval(
            "fewer than two conversations: no spread between conversations", n, estimate=p
        )
    if p in (0.0, 1.0):
        effective = n * n / float((sizes.astype(float) ** 2).sum())
    else:
        residual_sums = np.bincount(codes, weights=y - p)
        variance = float((residual_sums**2).sum()) / (n * n)
        binomial = p * (1 - p) / n
        effective = n if variance <= 0 else min(float(n), n * binomial / variance)
    low, high = proportion_confint(p * effective, effective, alpha=1 - confidence, method="wilson")
    return Interval(p, float(low), float(high), n)


def _record(interval: Interval) -> IntervalRecord:
    return IntervalRecord(
        estimate=finite_or_none(interval.estimate),
        low=finite_or_none(interval.low),
        high=finite_or_none(interval.high),
        n=interval.n,
        skipped=interval.skipped,
        missing=interval.missing,
    )


def divergence(
    pairs: pd.DataFrame,
    design: Design,
    conversations: pd.DataFrame,
    *,
    confidence: float = 0.95,
) -> Divergence:
    """The divergence measures of a run from its stance pairs: per cell (the design's
    factors), round and role, and the tests between cells that differ in one factor."""
    check_stance_pairs(pairs)
    known = set(conversations["conversation_id"].astype(str))
    pairs = pairs[texts_in(pairs["conversation_id"], known)].reset_index(drop=True)
    pairs = pairs.assign(conversation_id=pairs["conversation_id"].astype(str))
    levels = design.levels(conversations)
    measures = classify_pairs(pairs)
    frame = pairs.drop(columns=["agree"]).join(measures)
    rows: list[DivergenceRow] = []
    keys = design.by(extra=["round", "role"])
    for cell, group in cell_groups(frame, keys, levels):
        classified = group[group["skipped"].isna()]
        reasons = group["skipped"].dropna().astype(str).value_counts()
        values: dict[str, Any] = {}
        counts: dict[str, int] = {}
        for name in MEASURES:
            flags = classified[name].astype(bool).to_numpy()
            counts[name] = int(flags.sum())
            interval = clustered_proportion_ci(
                flags, classified["conversation_id"].to_numpy(), confidence=confidence
            )
            values[name] = _record(interval)
        rows.append(
            DivergenceRow.model_validate(
                {
                    **cell,
                    "round": int(cell["round"]),
                    "role": str(cell["role"]),
                    "pairs": len(group),
                    "n": len(classified),
                    "conversations": int(classified["conversation_id"].nunique()),
                    "skipped": {str(k): int(v) for k, v in sorted(reasons.items())},
                    "counts": counts,
                    **values,
                }
            )
        )
    return Divergence(
        interval=INTERVAL_METHOD,
        by_cell=rows,
        tests=_tests(frame, design, conversations, levels),
    )


def _tests(
    frame: pd.DataFrame,
    design: Design,
    conversations: pd.DataFrame,
    levels: dict[str, dict[str, Any]],
) -> list[DivergenceTest]:
    """Every tested share between two cells that differ in exactly one factor, per role,
    with Holm's adjustment over the whole family."""
    factors = list(design.factors)
    if not factors:
        return []
    units = conversations.assign(conversation_id=conversations["conversation_id"].astype(str))
    units = units.reset_index(drop=True)  # a cell's index labels are its rows' places
    cells = cell_groups(units, factors, levels)
    keys_of = [_unit_keys(group) for _, group in cells]
    places = [
        _places(group, keys is not None) for (_, group), keys in zip(cells, keys_of, strict=True)
    ]
    classified = frame[frame["skipped"].isna()]
    flags = classified.assign(
        **{name: classified[name].astype(bool).astype(float) for name in TESTED}
    )
    ids = units["conversation_id"].tolist()
    per_conversation = {  # each unit's share (NaN without a classified pair), in units' order
        (str(role), name): flags[flags["role"] == role]
        .groupby("conversation_id")[name]
        .mean()
        .reindex(ids)
        .to_numpy(dtype=float)
        for role in sorted(frame["role"].astype(str).unique())
        for name in TESTED
    }
    found: list[tuple[dict[str, Any], TestResult, float]] = []
    for (i, (first, _)), (j, (second, _)) in combinations(enumerate(cells), 2):
        differing = [f for f in factors if first[f] != second[f]]
        if len(differing) != 1:
            continue
        paired = keys_of[i] is not None and keys_of[i] == keys_of[j]
        a, b = places[i][paired], places[j][paired]
        for (role, name), shares in per_conversation.items():
            va, vb = shares[a], shares[b]
            if paired:
                result = wilcoxon_signed_rank(vb, va)
                both = ~(np.isnan(va) | np.isnan(vb))
                difference = float(np.mean(vb[both] - va[both])) if both.any() else math.nan
            else:
                result = mann_whitney_u(vb, va)
                ca, cb = va[~np.isnan(va)], vb[~np.isnan(vb)]
                difference = float(cb.mean() - ca.mean()) if len(ca) and len(cb) else math.nan
            info = {
                "role": role,
                "measure": name,
                "factor": differing[0],
                "first": first,
                "second": second,
                "paired": paired,
            }
            found.append((info, result, difference))
    adjusted = holm([r.p_value if r.computed else None for _, r, _ in found])
    return [
        DivergenceTest(
            **info,
            test=result.test,
            method=result.method,
            statistic=finite_or_none(result.statistic) if result.computed else None,
            p_value=finite_or_none(result.p_value) if result.computed else None,
            p_holm=p_holm,
            difference=finite_or_none(difference),
            n=result.n,
            missing=result.missing,
            skipped=result.skipped,
        )
        for (info, result, difference), p_holm in zip(found, adjusted, strict=True)
    ]


def _unit_keys(group: pd.DataFrame) -> tuple[tuple[str, int], ...] | None:
    """A cell's (item, replicate) keys in order, or None when one repeats (no pairing)."""
    keys = sorted(zip(group["item_id"].astype(str), group["replicate"].astype(int), strict=True))
    return tuple(keys) if len(set(keys)) == len(keys) else None


def _places(group: pd.DataFrame, pairable: bool) -> dict[bool, np.ndarray]:
    """A cell's rows among the units (its index), unpaired in the cell's order and, when its
    keys are unique, paired in the order of its (item, replicate) keys."""
    rows = group.index.to_numpy(dtype=np.int64)
    places = {False: rows}
    if pairable:
        items = [str(item) for item in group["item_id"].tolist()]
        replicates = [int(r) for r in group["replicate"].tolist()]
        order = sorted(range(len(rows)), key=lambda i: (items[i], replicates[i]))
        places[True] = rows[np.asarray(order, dtype=np.int64)]
    return places
