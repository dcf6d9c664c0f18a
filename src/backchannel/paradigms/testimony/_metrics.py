"""Metrics of the testimony paradigm (definitions in docs/paradigms/testimony.md).

Analysed group: the four story roles other than the key role, in C0 and C1 alike. At each
checkpoint a run has a truth majority (at least 3 of the 4 vote the true endpoint lm), a decoy
majority (at least 3 vote l(m-1)) or no consensus (anything else, an UNKNOWN majority included).
A vote that could not be read counts as "failed", one cut off by its token budget as
"truncated": both are reported, never turned into an answer. Paired tests pair by story.

Every section is computed once per cell of the factors the run declares beyond the study's arm
(`_cells.Cells`) and validated into the typed `TestimonyMetrics` (`_results.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from itertools import combinations
from typing import Any

import pandas as pd

from backchannel.analysis import Design, RunTables, decode_json, jsonable
from backchannel.paradigms.testimony._cells import Cells, with_cell
from backchannel.paradigms.testimony._graph import citation_judges
from backchannel.paradigms.testimony._lineage import lineage_metrics
from backchannel.paradigms.testimony._outcomes import outcome_frame
from backchannel.paradigms.testimony._phases import participant_checkpoints
from backchannel.paradigms.testimony._results import TestimonyMetrics
from backchannel.paradigms.testimony._stats import paired_difference, wilson
from backchannel.paradigms.testimony._votes import VOTE_KINDS

OUTCOMES = ("truth", "decoy", "none")


def outcome_of(kinds: Sequence[str], threshold: int) -> str:
    """truth if at least `threshold` votes are true, decoy if at least `threshold` are decoy,
    else none (no consensus)."""
    if sum(k == "true" for k in kinds) >= threshold:
        return "truth"
    if sum(k == "decoy" for k in kinds) >= threshold:
        return "decoy"
    return "none"


def checkpoint_outcomes(tables: RunTables) -> pd.DataFrame:
    """One row per finished conversation, group and checkpoint: vote counts and the outcome.

    Groups: `participants` (the analysed four) at T0, T1, R1..RK; `observers` at their vote;
    `all` (the analysed four at RK with the observers) where observers took part. Rows follow
    the conversations' stored order; within one: the participants' checkpoints, then each
    round the observers voted at (observers, then all). Computed for the whole run at once
    (`_outcomes`).
    """
    return outcome_frame(tables)


ARM = ["model", "condition", "intervention"]
"""The study's arm keys of every outcome row (the model label: the story roles' models)."""


def outcome_rates(outcomes: pd.DataFrame) -> list[dict[str, Any]]:
    """Per model, condition, intervention, group and checkpoint: the share of runs with each
    outcome (Wilson 95 % intervals), vote shares, and failed and truncated votes."""
    result = []
    keys = [*ARM, "group", "checkpoint"]
    for values, rows in outcomes.groupby(keys, sort=False):
        n, voters = len(rows), int(rows["voters"].sum())
        entry: dict[str, Any] = dict(zip(keys, values, strict=True))
        entry["runs"] = n
        for outcome in OUTCOMES:
            entry[outcome] = wilson(int((rows["outcome"] == outcome).sum()), n)
        for kind in VOTE_KINDS:
            entry[f"{kind}_share"] = float(rows[kind].sum() / voters) if voters else float("nan")
        entry["failed_votes"] = int(rows["failed"].sum())
        entry["truncated_votes"] = int(rows["truncated"].sum())
        result.append(entry)
    return result


def truth_by_deception(outcomes: pd.DataFrame, last: str) -> list[dict[str, Any]]:
    """Per arm: the participants' truth majority at `last` over every story (`all`) and per
    deception type, with Wilson 95 % intervals."""
    rows = outcomes[(outcomes["group"] == "participants") & (outcomes["checkpoint"] == last)]
    result = []
    for values, arm in rows.groupby(ARM, sort=False):
        base = dict(zip(ARM, values, strict=True))
        parts = [("all", arm), *((str(d), g) for d, g in arm.groupby("deception", sort=True))]
        for deception, group in parts:
            truth = wilson(int((group["outcome"] == "truth").sum()), len(group))
            result.append({**base, "deception": deception, "checkpoint": last, "truth": truth})
    return result


# The paired measures: name -> (binary outcome, or the vote kind whose share per story is used).
MEASURES: dict[str, tuple[str, str]] = {
    "truth_majority": ("outcome", "truth"),
    "decoy_majority": ("outcome", "decoy"),
    "no_consensus": ("outcome", "none"),
    "true_vote_share": ("share", "true"),
    "decoy_vote_share": ("share", "decoy"),
}
SPLITS = ("deception", "key_message_kind", "source")


def story_values(rows: pd.DataFrame, measure: str) -> pd.Series:
    """Each run's value of a measure: 1/0 for an outcome, the share of the analysed votes of
    one kind for a vote share."""
    how, what = MEASURES[measure]
    if how == "outcome":
        return (rows["outcome"] == what).astype(float)
    return rows[what] / rows["voters"].where(rows["voters"] > 0)


def _paired_frame(
    outcomes: pd.DataFrame, model: str, checkpoint: str, measure: str = "truth_majority"
) -> pd.DataFrame:
    """One row per story with both C0 and C1 (intervention none): the measure in each."""
    return _paired_frames(outcomes, model, checkpoint, [measure])[measure]


def _paired_frames(
    outcomes: pd.DataFrame, model: str, checkpoint: str, measures: Sequence[str]
) -> dict[str, pd.DataFrame]:
    """`_paired_frame` of each measure from one pivot: a pivot per measure cost a third of the
    condition gaps at 10,000 conversations. Each measure keeps its own stories, since a story
    lacking one measure in C0 or C1 (a share over no vote) is dropped for that measure only."""
    rows = outcomes[
        (outcomes["model"] == model)
        & (outcomes["intervention"] == "none")
        & (outcomes["group"] == "participants")
        & (outcomes["checkpoint"] == checkpoint)
    ]
    index = ["item_id", *SPLITS]
    values = {measure: story_values(rows, measure) for measure in measures}
    wide = (
        rows[[*index, "condition"]]
        .assign(**values)
        .pivot_table(index=index, columns="condition", values=list(measures), aggfunc="first")
    )
    result = {}
    for measure in measures:
        conditions = wide.columns[wide.columns.get_level_values(0) == measure]
        if {"C0", "C1"} - set(conditions.get_level_values("condition")):
            result[measure] = pd.DataFrame(columns=[*index, "C0", "C1"])
        else:
            result[measure] = wide[measure][["C0", "C1"]].dropna().reset_index()
    return result


def _difference(first: list[float], second: list[float], measure: str) -> dict[str, Any]:
    binary = MEASURES[measure][0] == "outcome"
    return paired_difference(first, second, test="mcnemar" if binary else "wilcoxon")


def condition_gaps(outcomes: pd.DataFrame, checkpoints: list[str]) -> list[dict[str, Any]]:
    """C0 - C1 differences per story, by checkpoint and measure (truth, decoy and no-consensus
    majority, true- and decoy-vote shares): overall, per deception type, key-message kind and
    environment source (percentage points, bootstrap 95 % CI; exact McNemar for majorities,
    Wilcoxon signed-rank for shares)."""
    result = []
    base = outcomes[(outcomes["intervention"] == "none") & (outcomes["group"] == "participants")]
    for model in sorted(outcomes["model"].unique()):
        mine = base[base["model"] == model]
        for checkpoint in checkpoints:
            frames = _paired_frames(mine, model, checkpoint, list(MEASURES))
            for measure in MEASURES:
                paired = frames[measure]
                splits: list[tuple[str, str, pd.DataFrame]] = [("all", "all", paired)]
                for column in SPLITS:
                    for level, rows in paired.groupby(column, sort=True):
                        splits.append((column, str(level), rows))
                for split, level, rows in splits:
                    result.append(
                        {
                            "model": model,
                            "checkpoint": checkpoint,
                            "measure": measure,
                            "split": split,
                            "level": level,
                            **_difference(rows["C0"].tolist(), rows["C1"].tolist(), measure),
                        }
                    )
    return result


def gap_at_first_testimony(gaps: list[dict[str, Any]], last: str) -> list[dict[str, Any]]:
    """Per model: the share of the final (RK) C0 - C1 gap already present at T1."""
    result = []
    overall = [g for g in gaps if g["split"] == "all" and g["measure"] == "truth_majority"]
    for model in sorted({g["model"] for g in overall}):
        by_checkpoint = {g["checkpoint"]: g for g in overall if g["model"] == model}
        t1, final = by_checkpoint.get("T1"), by_checkpoint.get(last)
        entry: dict[str, Any] = {"model": model, "final_checkpoint": last}
        if t1 is None or final is None or final["n"] == 0:
            entry.update(share=float("nan"), reason="no paired C0/C1 runs")
        elif final["estimate_pp"] == 0:
            entry.update(share=float("nan"), reason="no gap at the final checkpoint")
        else:
            entry.update(
                share=t1["estimate_pp"] / final["estimate_pp"],
                gap_t1_pp=t1["estimate_pp"],
                gap_final_pp=final["estimate_pp"],
            )
        result.append(entry)
    return result


def between_models(outcomes: pd.DataFrame, last: str) -> list[dict[str, Any]]:
    """Pairs of models, paired by story at RK: truth majority per condition (A - B), the
    difference of their C0 - C1 truth gaps (sign test), and of their decoy-vote effects, the
    per-story C1 - C0 decoy-vote share (Wilcoxon signed-rank)."""
    models = sorted(outcomes["model"].unique())
    result = []
    for a, b in combinations(models, 2):
        pa, pb = _paired_frame(outcomes, a, last), _paired_frame(outcomes, b, last)
        both = pa.merge(pb, on="item_id", suffixes=("_a", "_b"))
        for condition in ("C0", "C1"):
            result.append(
                {
                    "model_a": a,
                    "model_b": b,
                    "measure": f"truth majority {condition}",
                    **paired_difference(
                        both[f"{condition}_a"].tolist(), both[f"{condition}_b"].tolist()
                    ),
                }
            )
        gap_a = (both["C0_a"] - both["C1_a"]).tolist()
        gap_b = (both["C0_b"] - both["C1_b"]).tolist()
        result.append(
            {
                "model_a": a,
                "model_b": b,
                "measure": "C0 - C1 gap",
                **paired_difference(gap_a, gap_b, binary=False),
            }
        )
        da = _paired_frame(outcomes, a, last, "decoy_vote_share")
        db = _paired_frame(outcomes, b, last, "decoy_vote_share")
        decoy = da.merge(db, on="item_id", suffixes=("_a", "_b"))
        result.append(
            {
                "model_a": a,
                "model_b": b,
                "measure": "decoy-vote effect (C1 - C0)",
                **paired_difference(
                    (decoy["C1_a"] - decoy["C0_a"]).tolist(),
                    (decoy["C1_b"] - decoy["C0_b"]).tolist(),
                    test="wilcoxon",
                ),
            }
        )
    return result


# Each intervention arm against the arms it is read against (condition, intervention).
CONTRASTS: tuple[tuple[tuple[str, str], tuple[str, str]], ...] = (
    (("C0", "honest_exit"), ("C0", "none")),
    (("C0", "null_exit"), ("C0", "none")),
    (("C1", "false_exit"), ("C1", "none")),
    (("C1", "false_exit"), ("C0", "null_exit")),
    (("C1", "passive_observers"), ("C1", "none")),
    (("C1", "active_observers"), ("C1", "none")),
    (("C0", "passive_observers"), ("C0", "none")),
    (("C0", "active_observers"), ("C0", "none")),
)


def arm_contrasts(outcomes: pd.DataFrame, last: str) -> list[dict[str, Any]]:
    """Intervention arms against their references, paired by story, for the participants at
    RK: the difference (arm - reference) in truth and in decoy majority, in percentage points,
    with a bootstrap 95 % interval and the exact McNemar test. Arms the run lacks are skipped."""
    rows = outcomes[(outcomes["group"] == "participants") & (outcomes["checkpoint"] == last)]
    result = []
    for model in sorted(rows["model"].unique()):
        mine = rows[rows["model"] == model]
        for arm, reference in CONTRASTS:
            a = mine[(mine["condition"] == arm[0]) & (mine["intervention"] == arm[1])]
            b = mine[(mine["condition"] == reference[0]) & (mine["intervention"] == reference[1])]
            if a.empty or b.empty:
                continue
            both = a.merge(b, on="item_id", suffixes=("_a", "_b"))
            for outcome in ("truth", "decoy"):
                result.append(
                    {
                        "model": model,
                        "arm": " ".join(arm),
                        "reference": " ".join(reference),
                        "outcome": outcome,
                        **paired_difference(
                            (both["outcome_a"] == outcome).astype(int).tolist(),
                            (both["outcome_b"] == outcome).astype(int).tolist(),
                        ),
                    }
                )
    return result


def testimony_metrics(tables: RunTables) -> TestimonyMetrics:
    """Everything `backchannel metrics RUN --json` prints for a testimony run, per cell of the
    factors the run declares beyond the study's arms (`Cells`)."""
    design = Design.of(tables)
    cells = Cells.of(tables, design)
    # The lineage reads only the tables: on a large run it is computed in a forked copy of
    # the process while this one computes the outcomes.
    with tables.beside(partial(lineage_metrics, tables, cells)) as lineage:
        data = _outcome_sections(tables, design, cells)
        data["lineage"] = lineage.result()
    return TestimonyMetrics.build(jsonable(data), design)


def _outcome_sections(tables: RunTables, design: Design, cells: Cells) -> dict[str, Any]:
    """Every section but the lineage: outcomes per checkpoint and their contrasts, per cell."""
    outcomes = checkpoint_outcomes(tables)
    analysed = outcomes[outcomes["group"] == "participants"]
    rounds = _rounds(tables)
    checkpoints = participant_checkpoints(rounds)
    last = checkpoints[-1]
    sections: dict[str, list[dict[str, Any]]] = {
        "outcome_rates": [],
        "truth_by_deception": [],
        "condition_gaps": [],
        "gap_at_T1": [],
        "between_models": [],
        "intervention_contrasts": [],
    }
    for cell, part in cells.split(outcomes) if len(outcomes) else []:
        gaps = condition_gaps(part, checkpoints)
        found = {
            "outcome_rates": (outcome_rates(part), "intervention"),
            "truth_by_deception": (truth_by_deception(part, last), "intervention"),
            "condition_gaps": (gaps, "model"),
            "gap_at_T1": (gap_at_first_testimony(gaps, last), "model"),
            "between_models": (between_models(part, last), "model_b"),
            "intervention_contrasts": (arm_contrasts(part, last), "model"),
        }
        for name, (rows, after) in found.items():
            sections[name] += [with_cell(row, cell, after) for row in rows]
    conversations = tables.conversations
    done = int((conversations["status"] == "done").sum()) if len(conversations) else 0
    data = {
        "pooled": pooled_factors(design, citation_judges(tables)),
        "conversations": done,
        "not_done": int(len(conversations) - done),
        "analysed_group": "the four story roles other than the key role",
        "checkpoints": checkpoints,
        "failed_votes": int(analysed["failed"].sum()),
        "truncated_votes": int(analysed["truncated"].sum()),
        **sections,
    }
    return data


def pooled_factors(design: Design, judges: Sequence[str]) -> dict[str, list[str]]:
    """The sections whose definition contrasts factor levels, and those factors (the ones the
    run declared): C0 against C1 at intervention none, an intervention against its reference,
    one model against another; and each judge's extraction summary, counted over the run."""
    contrasted = design.pooled(["condition", "intervention"])
    named = {
        "condition_gaps": contrasted,
        "gap_at_T1": contrasted,
        "between_models": design.pooled(["model", "condition", "intervention"]),
        "intervention_contrasts": contrasted,
        **{f"lineage.by_judge.{judge}.extraction": list(design.factors) for judge in judges},
    }
    return {section: factors for section, factors in named.items() if factors}


def _rounds(tables: RunTables) -> int:
    for text in tables.conversations.get("meta", pd.Series(dtype=object)):
        meta = decode_json(text)
        if isinstance(meta, dict) and "rounds" in meta:
            return int(meta["rounds"])
    return 3
