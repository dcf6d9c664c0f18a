"""Say versus believe: how often an agent's public stance and its private answer part ways.

A paradigm reads its two channels into stance pairs (`STANCE_PAIR_COLUMNS`, one row per public
turn and the nearest private probe of the same agent on the same question); this module turns
them into the kit's divergence measures, per cell, round and role, with intervals that respect
the clustering of pairs within conversations and tests between cells. Definitions:
docs/divergence.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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
    y = np.asarray(values, dtype=float)
    groups = np.asarray(clusters)
    if len(y) != len(groups):
        _check_confidence(confidence)
        raise ValueError("values and clusters differ in length")

    def codes() -> np.ndarray:
        import pandas as pd

        found, _ = pd.factorize(groups, sort=True)  # np.unique's codes, without sorting rows
        return np.asarray(found)

    return _clustered_ci(y, codes, confidence)


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")


def _clustered_ci(y: np.ndarray, codes: Callable[[], np.ndarray], confidence: float) -> Interval:
    """`clustered_proportion_ci` of the units `y`, whose clusters `codes()` numbers 0, 1, ... in
    the sorted order of their ids (asked for only when there are units)."""
    _check_confidence(confidence)
    n = len(y)
    if n == 0:
        return skipped_interval("no classified pairs", 0)
    p = float(y.mean())
    clusters = codes()
    sizes = np.bincount(clusters)
    g = len(sizes)
    if g < 2:
        return skipped_interval(
            "fewer than two conversations: no spread between conversations", n, estimate=p
        )
    if p in (0.0, 1.0):
        effective = n * n / float((sizes.astype(float) ** 2).sum())
    else:
        residual_sums = np.bincount(clusters, weights=y - p)
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
    factors), round and role, and the tests between cells that differ in one factor.

    Cells are found on the few key columns only, and each measure and conversation id is read
    once as an array: taking every cell's rows of the whole frame copied its texts."""
    check_stance_pairs(pairs)
    known = set(conversations["conversation_id"].astype(str))
    pairs = pairs[texts_in(pairs["conversation_id"], known)].reset_index(drop=True)
    pairs = pairs.assign(conversation_id=pairs["conversation_id"].astype(str))
    levels = design.levels(conversations)
    measures = classify_pairs(pairs)
    frame = pairs.drop(columns=["agree"]).join(measures)
    keys = design.by(extra=["round", "role"])
    columns = dict.fromkeys(["conversation_id", *(k for k in keys if k in frame.columns)])
    classified = frame["skipped"].isna().to_numpy(dtype=bool)
    flags = {name: _flags(frame[name], classified) for name in MEASURES}
    conversation_codes = _sorted_codes(frame["conversation_id"].to_numpy())
    reason_codes, reasons = _reason_codes(frame["skipped"], classified)
    rows: list[DivergenceRow] = []
    for cell, group in cell_groups(frame[list(columns)], keys, levels):
        everyone = group.index.to_numpy(dtype=np.int64)  # the frame's index is its places
        chosen = everyone[classified[everyone]]
        dense = _dense(conversation_codes[chosen])
        skipped = np.bincount(reason_codes[everyone][~classified[everyone]], minlength=len(reasons))
        values: dict[str, Any] = {}
        counts: dict[str, int] = {}
        for name in MEASURES:
            y = flags[name][chosen]
            counts[name] = int(np.count_nonzero(y))
            values[name] = _record(_clustered_ci(y.astype(float), dense, confidence))
        rows.append(
            DivergenceRow.model_validate(
                {
                    **cell,
                    "round": int(cell["round"]),
                    "role": str(cell["role"]),
                    "pairs": len(everyone),
                    "n": len(chosen),
                    "conversations": len(np.unique(conversation_codes[chosen])),
                    "skipped": {
                        reasons[i]: int(skipped[i])
                        for i in sorted(np.flatnonzero(skipped).tolist(), key=reasons.__getitem__)
                    },
                    "counts": counts,
                    **values,
                }
            )
        )
    return Divergence(
        interval=INTERVAL_METHOD,
        by_cell=rows,
        tests=_tests(frame, design, conversations, levels, (classified, flags)),
    )


def _flags(column: pd.Series, classified: np.ndarray) -> np.ndarray:
    """A measure as booleans, as `astype(bool)` reads it on the classified pairs (a skipped
    pair's NA reads False: it is never counted)."""
    values = np.zeros(len(column), dtype=bool)
    values[classified] = column[classified].astype(bool).to_numpy(dtype=bool)
    return values


def _sorted_codes(values: np.ndarray) -> np.ndarray:
    """Each value's code among the distinct values in sorted order (`pd.factorize` sorted)."""
    import pandas as pd

    codes, _ = pd.factorize(values, sort=True)
    return np.asarray(codes, dtype=np.int64)


def _dense(codes: np.ndarray) -> Callable[[], np.ndarray]:
    """Codes of a subset renumbered 0, 1, ... keeping their order: what sorting the subset's
    own ids would give."""
    return lambda: np.unique(codes, return_inverse=True)[1].reshape(-1)


def _reason_codes(column: pd.Series, classified: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Each skipped pair's reason (as text) coded, -1 for a classified pair, and the reasons."""
    codes = np.full(len(column), -1, dtype=np.int64)
    found, reasons = _factorized_texts(column[~classified].astype(str))
    codes[~classified] = found
    return codes, reasons


def _factorized_texts(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    import pandas as pd

    codes, uniques = pd.factorize(column)
    return np.asarray(codes, dtype=np.int64), [str(u) for u in uniques.tolist()]


def _tests(
    frame: pd.DataFrame,
    design: Design,
    conversations: pd.DataFrame,
    levels: dict[str, dict[str, Any]],
    measured: tuple[np.ndarray, dict[str, np.ndarray]],
) -> list[DivergenceTest]:
    """Every tested share between two cells that differ in exactly one factor, per role,
    with Holm's adjustment over the whole family."""
    factors = list(design.factors)
    if not factors:
        return []
    units = conversations.assign(conversation_id=conversations["conversation_id"].astype(str))
    units = units.reset_index(drop=True)  # a cell's index labels are its rows' places
    columns = dict.fromkeys(
        ["conversation_id", *(f for f in factors if f in units.columns), "item_id", "replicate"]
    )
    cells = cell_groups(units[list(columns)], factors, levels)
    items = _sorted_codes(units["item_id"].astype(str).to_numpy())
    replicates = units["replicate"].astype(int).to_numpy(dtype=np.int64)
    keys_of = [_unit_keys(group.index.to_numpy(np.int64), items, replicates) for _, group in cells]
    places = [
        _places(group.index.to_numpy(np.int64), keys)
        for (_, group), keys in zip(cells, keys_of, strict=True)
    ]
    per_conversation = _shares(frame, units["conversation_id"], *measured)
    return compared_cells(
        cells,
        factors,
        places,
        per_conversation,
        lambda i, j: _same_keys(keys_of[i], keys_of[j]),
    )


def compared_cells(
    cells: Sequence[tuple[dict[str, Any], pd.DataFrame]],
    factors: Sequence[str],
    places: Sequence[dict[bool, np.ndarray]],
    per_conversation: dict[tuple[str, str], np.ndarray],
    paired_cells: Callable[[int, int], bool],
) -> list[DivergenceTest]:
    """Each share of `per_conversation` tested between every two cells that differ in exactly
    one factor (Wilcoxon on paired cells, Mann-Whitney otherwise; `places[i][paired]` are cell
    i's rows in that order), with Holm's adjustment over the whole family."""
    found: list[tuple[dict[str, Any], TestResult, float]] = []
    for (i, (first, _)), (j, (second, _)) in combinations(enumerate(cells), 2):
        differing = [f for f in factors if first[f] != second[f]]
        if len(differing) != 1:
            continue
        paired = paired_cells(i, j)
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


def _shares(
    frame: pd.DataFrame,
    ids: pd.Series,
    classified: np.ndarray,
    flags: dict[str, np.ndarray],
) -> dict[tuple[str, str], np.ndarray]:
    """Each unit's share of each tested measure per role, in units' order (NaN without a
    classified pair of that role): the mean of its pairs' 0/1 flags, summed exactly."""
    import pandas as pd

    codes, uniques = pd.factorize(pd.concat([frame["conversation_id"], ids], ignore_index=True))
    codes = np.asarray(codes, dtype=np.int64)
    pair_codes, unit_codes = codes[: len(frame)], codes[len(frame) :]
    found: dict[tuple[str, str], np.ndarray] = {}
    for role in sorted(frame["role"].astype(str).unique()):
        chosen = classified & (frame["role"] == role).to_numpy(dtype=bool)
        counts = np.bincount(pair_codes[chosen], minlength=len(uniques)).astype(float)
        for name in TESTED:
            sums = np.bincount(
                pair_codes[chosen], weights=flags[name][chosen], minlength=len(uniques)
            )
            with np.errstate(invalid="ignore"):
                found[(str(role), name)] = (sums / counts)[unit_codes]
    return found


UnitKeys = tuple[np.ndarray, np.ndarray, np.ndarray]
"""A cell's (item, replicate) keys: the order that sorts its units by them, and the keys' item
codes and replicates in that order."""


def _unit_keys(rows: np.ndarray, items: np.ndarray, replicates: np.ndarray) -> UnitKeys | None:
    """A cell's (item, replicate) keys in order (item codes sort as the items' texts), with the
    order that sorts them, or None when one repeats (no pairing)."""
    item, replicate = items[rows], replicates[rows]
    order = np.lexsort((replicate, item))
    item, replicate = item[order], replicate[order]
    repeated = (item[1:] == item[:-1]) & (replicate[1:] == replicate[:-1])
    return None if bool(repeated.any()) else (order, item, replicate)


def _same_keys(first: UnitKeys | None, second: UnitKeys | None) -> bool:
    if first is None or second is None:
        return False
    return bool(np.array_equal(first[1], second[1]) and np.array_equal(first[2], second[2]))


def _places(rows: np.ndarray, keys: UnitKeys | None) -> dict[bool, np.ndarray]:
    """A cell's rows among the units (its index), unpaired in the cell's order and, when its
    keys are unique, paired in the order of its (item, replicate) keys."""
    places = {False: rows}
    if keys is not None:
        places[True] = rows[keys[0]]
    return places
