"""Per-deliberation measures and their aggregation per scenario, Delphi variant, state and
level of every other factor the run declares.

States: A (one model for every role) and B (a pool of models) are the `pool` factor's levels;
C is B's deliberations re-tallied with every evaluator's Borda points times its verification
score, computed from the same conversations (no new calls). Cells come from the run's design:
a group never averages over a declared factor, and the tests compare states within one level
of every factor but `pool`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables, bootstrap_mean_ci, cell_groups, jsonable
from backchannel.paradigms.council._extract import Deliberation, deliberations
from backchannel.paradigms.council._results import CouncilMetrics
from backchannel.paradigms.council._stats import (
    Alternative,
    ComparisonResult,
    bonferroni,
    mann_whitney,
    wilcoxon,
)
from backchannel.paradigms.council._tension import (
    DEFAULT_THRESHOLD,
    TensionClass,
    class_counts,
    tension_verdicts,
)
from backchannel.paradigms.council._voting import (
    Ballot,
    borda,
    first_choice_concentration,
    first_choice_entropy,
)

TIE = "tie"
POOL = "pool"
THRESHOLD = "threshold"


@dataclass(frozen=True)
class Hypothesis:
    """One one-sided between-state comparison of a per-deliberation measure."""

    measure: str
    first: str
    second: str
    alternative: Alternative
    primary: bool = False

    def __post_init__(self) -> None:
        pair = (self.first, self.second)
        if pair not in (("A", "B"), ("B", "C")):
            raise ValueError(f"comparisons are A vs B or B vs C, got {pair}")
        if self.alternative not in ("greater", "less"):
            raise ValueError(f"alternative must be 'greater' or 'less', got {self.alternative!r}")

    @property
    def test(self) -> str:
        return "mann_whitney_u" if self.first == "A" else "wilcoxon_signed_rank"


#: The pre-registered comparisons: one model concentrates the vote (A > B); weighting by
#: faithfulness lowers concentration (B > C). The first is primary, the others Bonferroni-adjusted.
HYPOTHESES: tuple[Hypothesis, ...] = (
    Hypothesis("fcc", "A", "B", "greater", primary=True),
    Hypothesis("margin", "A", "B", "greater"),
    Hypothesis("entropy_bits", "A", "B", "less"),
    Hypothesis("fcc", "B", "C", "greater"),
    Hypothesis("margin", "B", "C", "greater"),
)


def _tally_row(
    d: Deliberation, state: str, ballots: Sequence[Ballot], weighted: bool
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "conversation_id": d.conversation_id,
        "scenario": d.scenario,
        "delphi": d.delphi,
        "state": state,
        "evaluators": len(ballots),
        "invalid_rankings": d.invalid_rankings,
        "failed_scores": d.failed_scores,
    }
    if not ballots or (weighted and sum(b.score or 0.0 for b in ballots) == 0):
        row.update(fcc=math.nan, margin=math.nan, entropy_bits=math.nan, winner=None)
        return row
    tally = borda(ballots, d.options, weighted=weighted)
    row.update(
        fcc=first_choice_concentration(ballots, d.options, weighted=weighted),
        margin=tally.margin,
        entropy_bits=first_choice_entropy(ballots, d.options, weighted=weighted),
        winner=tally.winner if tally.winner is not None else TIE,
        winners=list(tally.winners),
        borda={k: float(v) for k, v in tally.scores.items()},
    )
    return row


def threshold_of(d: Deliberation, threshold: float | None) -> float:
    """The faithfulness threshold of a deliberation: `threshold`, or (None) its cell's level of
    the `threshold` factor."""
    if threshold is not None:
        return threshold
    if THRESHOLD not in d.cell:
        raise ValueError(f"{d.conversation_id}: no threshold given and none in its cell")
    return float(d.cell[THRESHOLD])


def deliberation_table(
    items: Sequence[Deliberation], threshold: float | None = DEFAULT_THRESHOLD
) -> pd.DataFrame:
    """One row per deliberation and state (B's conversations also yield a C row); `threshold`
    None takes each deliberation's own level of the `threshold` factor."""
    rows: list[dict[str, Any]] = []
    for d in items:
        row = _tally_row(d, d.pool, d.ballots, weighted=False)
        own = threshold_of(d, threshold)
        verdicts = tension_verdicts(d.ballots, threshold=own)
        counts = class_counts(verdicts)
        row.update(counts)
        scored = [b.score for b in d.ballots if b.score is not None]
        row["faithful"] = sum(s >= own for s in scored)
        row["scored"] = len(scored)
        if d.delphi != "none":
            row.update(_revisions(d))
        rows.append(row)
        if d.pool == "B" and scored:
            weighted = [b for b in d.ballots if b.score is not None]
            c_row = _tally_row(d, "C", weighted, weighted=True)
            c_row["unscored"] = len(d.ballots) - len(weighted)
            rows.append(c_row)
    return pd.DataFrame(rows)


def _revisions(d: Deliberation) -> dict[str, Any]:
    """Vote changes of one Delphi round and the council's concentration after it.

    After the round every evaluator votes with its revised ranking; one the variant did not
    ask (e.g. no seated tension partner) keeps its first ranking, and one whose revision failed
    is left out and counted in `invalid_revisions`, never given its old vote.
    """
    initial = {b.evaluator: b for b in d.ballots}
    revised = {r.evaluator: r for r in d.revised if r.evaluator in initial}
    pairs = [(initial[e], r) for e, r in revised.items()]
    after = [
        revised.get(b.evaluator, b)
        for b in d.ballots
        if b.evaluator in revised or b.evaluator not in d.asked_to_revise
    ]
    return {
        "revised": len(pairs),
        "invalid_revisions": d.invalid_revisions,
        "vote_changes": sum(a.first != r.first for a, r in pairs),
        "ranking_changes": sum(a.ranking != r.ranking for a, r in pairs),
        "fcc_revised": first_choice_concentration(after, d.options) if after else math.nan,
    }


def pair_table(
    items: Sequence[Deliberation], threshold: float | None = DEFAULT_THRESHOLD
) -> pd.DataFrame:
    """One row per evaluator pair on a tension pair (or per unmeasurable tension pair)."""
    rows = [
        {
            "conversation_id": d.conversation_id,
            "scenario": d.scenario,
            "delphi": d.delphi,
            "state": d.pool,
            "pair": v.pair.key,
            "first": v.first,
            "second": v.second,
            "class": v.cls.value,
            "reason": v.reason,
        }
        for d in items
        for v in tension_verdicts(d.ballots, threshold=threshold_of(d, threshold))
    ]
    return pd.DataFrame(
        rows,
        columns=[
            "conversation_id",
            "scenario",
            "delphi",
            "state",
            "pair",
            "first",
            "second",
            "class",
            "reason",
        ],
    )


def score_table(items: Sequence[Deliberation]) -> pd.DataFrame:
    """One row per evaluator with its value, first choice and verification score."""
    rows = [
        {
            "conversation_id": d.conversation_id,
            "scenario": d.scenario,
            "delphi": d.delphi,
            "state": d.pool,
            "evaluator": b.evaluator,
            "value": b.value,
            "first_choice": b.first,
            "score": b.score,
        }
        for d in items
        for b in d.ballots
    ]
    columns = ["conversation_id", "scenario", "delphi", "state", "evaluator", "value"]
    return pd.DataFrame(rows, columns=[*columns, "first_choice", "score"])


def _profiling_summary(tables: RunTables) -> dict[str, int]:
    """State-B deliberations that ran profiling, and those in which one model won every value
    (so state B ran as state A)."""
    done = tables.conversations[tables.conversations["status"] == "done"]
    metas = [json.loads(m) if m else {} for m in done["meta"]]
    profiled = [m for m in metas if "assignment" in m]
    collapsed = sum(bool(m.get("profiling_collapsed")) for m in profiled)
    return {"profiled": len(profiled), "collapsed": collapsed}


def _interval(values: pd.Series, seed: int) -> dict[str, Any]:
    """Bootstrap interval over deliberations; those without a value are counted in `missing`."""
    return bootstrap_mean_ci(values.to_numpy(dtype=float), seed=seed).as_dict()


def _group_summary(
    rows: pd.DataFrame, scores: pd.DataFrame, pairs: pd.DataFrame, threshold: float
) -> dict[str, Any]:
    winners = Counter(w for w in rows["winner"] if isinstance(w, str))
    tallies = [b for b in rows.get("borda", pd.Series(dtype=object)) if isinstance(b, dict)]
    totals: Counter[str] = Counter()
    for tally in tallies:
        totals.update(tally)
    summary: dict[str, Any] = {
        "deliberations": len(rows),
        "borda_totals": {
            option: {
                "total": float(points),
                "mean": float(points) / len(tallies),
                "n": len(tallies),
            }
            for option, points in sorted(totals.items())
        },
        "fcc": _interval(rows["fcc"], 1),
        "margin": _interval(rows["margin"], 2),
        "entropy_bits": _interval(rows["entropy_bits"], 3),
        "winner_distribution": dict(sorted(winners.items())),
        "invalid_rankings": int(rows["invalid_rankings"].sum()),
        "failed_scores": int(rows["failed_scores"].sum()),
    }
    if not pairs.empty:
        counts = {cls.value: int((pairs["class"] == cls.value).sum()) for cls in TensionClass}
        measured = len(pairs) - counts[TensionClass.UNMEASURABLE.value]
        credible = counts["genuine_disagreement"] + counts["genuine_agreement"]
        by_pair = {
            key: {cls: int((group["class"] == cls).sum()) for cls in sorted(set(group["class"]))}
            for key, group in pairs.groupby("pair", sort=False)
        }
        summary["tension"] = {
            "counts": counts,
            "credible_tension_rate": credible / measured if measured else None,
            "by_pair": by_pair,
        }
    scored = scores.dropna(subset=["score"])
    if not scored.empty:
        summary["voice_authenticity_rate"] = float((scored["score"] >= threshold).mean())
        summary["consistency_per_value"] = {
            str(value): float(group["score"].mean()) for value, group in scored.groupby("value")
        }
    if "vote_changes" in rows and rows["vote_changes"].notna().any():
        summary["revisions"] = {
            "vote_changes_total": int(rows["vote_changes"].sum()),
            "vote_changes_mean": float(rows["vote_changes"].mean()),
            "ranking_changes_total": int(rows["ranking_changes"].sum()),
            "revised_total": int(rows["revised"].sum()),
            "invalid_revisions": int(rows["invalid_revisions"].sum()),
            "fcc_revised": _interval(rows["fcc_revised"], 4),
        }
    return summary


def _run_test(h: Hypothesis, table: pd.DataFrame, resamples: int, seed: int) -> ComparisonResult:
    first = table[table["state"] == h.first].set_index("conversation_id")[h.measure]
    second = table[table["state"] == h.second].set_index("conversation_id")[h.measure]
    if h.first == "A":
        return mann_whitney(
            first.to_numpy(float),
            second.to_numpy(float),
            alternative=h.alternative,
            resamples=resamples,
            seed=seed,
        )
    joined = pd.concat([first.rename("x"), second.rename("y")], axis=1, join="inner")
    return wilcoxon(
        joined["x"].to_numpy(float),
        joined["y"].to_numpy(float),
        alternative=h.alternative,
        resamples=resamples,
        seed=seed,
    )


def _tests(
    table: pd.DataFrame, hypotheses: Sequence[Hypothesis], resamples: int
) -> list[dict[str, Any]]:
    results = [(h, _run_test(h, table, resamples, seed=i)) for i, h in enumerate(hypotheses)]
    secondary = [(h, r) for h, r in results if not h.primary]
    adjusted = dict(
        zip(
            [id(r) for _, r in secondary],
            bonferroni([r.p_value if r.computed else None for _, r in secondary]),
            strict=True,
        )
    )
    out: list[dict[str, Any]] = []
    for h, r in results:
        entry: dict[str, Any] = {
            "measure": h.measure,
            "comparison": f"{h.first} vs {h.second}",
            "primary": h.primary,
        }
        entry.update(r.as_dict())
        if r.computed:
            entry["p_adjusted"] = r.p_value if h.primary else adjusted[id(r)]
        out.append(entry)
    return out


def council_metrics(
    tables: RunTables,
    *,
    threshold: float | None = DEFAULT_THRESHOLD,
    hypotheses: Sequence[Hypothesis] = HYPOTHESES,
    resamples: int = 10_000,
) -> CouncilMetrics:
    """Every council metric of a run: per scenario, Delphi variant, state and level of every
    other declared factor. `threshold` None: each cell's own level of the `threshold` factor."""
    design = Design.of(tables)
    items = deliberations(tables)
    levels = {d.conversation_id: d.cell for d in items}
    table = deliberation_table(items, threshold)
    scores = score_table(items)
    pairs = pair_table(items, threshold)
    status = Counter(tables.conversations["status"])
    result: dict[str, Any] = {
        "threshold": threshold,
        "conversations": {k: int(v) for k, v in sorted(status.items())},
        "profiling": _profiling_summary(tables),
        "groups": [],
        "tests": [],
    }
    # Groups of every factor but `pool`, whose levels (with C) are the states inside a group.
    others = [f for f in design.factors if f not in ("delphi", POOL)]
    for cell, within in (
        cell_groups(table, ["scenario", "delphi", *others], levels) if len(table) else []
    ):
        states = sorted(set(within["state"]))
        factors = {f: cell[f] for f in others}
        for state in states:
            rows = within[within["state"] == state]
            source = "B" if state == "C" else state
            ids = set(within.loc[within["state"] == source, "conversation_id"])
            own = threshold if threshold is not None else float(cell[THRESHOLD])
            summary = _group_summary(
                rows,
                scores[scores["conversation_id"].isin(ids)],
                pairs[pairs["conversation_id"].isin(ids)],
                own,
            )
            pool = {POOL: source} if POOL in design.factors else {}
            result["groups"].append(
                {
                    "scenario": cell["scenario"],
                    "delphi": cell["delphi"],
                    **_in_design_order(design, {**factors, **pool}),
                    "state": state,
                    **summary,
                }
            )
        if {"A", "B"} <= set(states) or "C" in states:
            for entry in _tests(within, hypotheses, resamples):
                result["tests"].append(
                    {"scenario": cell["scenario"], "delphi": cell["delphi"], **factors, **entry}
                )
    if POOL in design.factors:
        result["pooled"] = {"tests": [POOL]}
    return CouncilMetrics.build(jsonable(result), design)


def _in_design_order(design: Design, levels: dict[str, Any]) -> dict[str, Any]:
    return {f: levels[f] for f in design.factors if f in levels and f != "delphi"}
