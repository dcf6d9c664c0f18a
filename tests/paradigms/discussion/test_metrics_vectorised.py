"""The discussion metrics computed for all conversations at once give exactly what the earlier
loop over conversations gave (kept here as the reference), on hand-built runs of every edge
case and on a seeded random run; and the edge cases' figures are worked out by hand."""

from __future__ import annotations

import math
import random
import re
from typing import Any

import pandas as pd
import pytest

from backchannel.analysis import RunTables
from backchannel.paradigms.discussion import conversation_figures, discussion_metrics

COLUMNS = ["conversation_id", "agents", "answer_change_rate", "final_agreement", "failed_probes"]


def reference_normalise(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", str(text).lower())).strip()


def reference_figures(tables: RunTables) -> pd.DataFrame:
    """The computation as it was: one pass of pandas operations per conversation."""
    probes = tables.events[(tables.events["kind"] == "probe") & (tables.events["name"] == "answer")]
    rows = []
    for conversation_id, group in probes.groupby("conversation_id", sort=True):
        failed = int((group["status"] != "ok").sum())
        ok = group[group["status"] == "ok"].copy()
        ok["answer"] = ok["text"].map(reference_normalise)
        first_checkpoint, last_checkpoint = group["round"].min(), group["round"].max()
        first = ok[ok["round"] == first_checkpoint].set_index("agent")["answer"]
        last = ok[ok["round"] == last_checkpoint].set_index("agent")["answer"]
        both = first.index.intersection(last.index)
        change = float((first[both] != last[both]).mean()) if len(both) else float("nan")
        agreement = float((last == last.mode().iloc[0]).mean()) if len(last) else float("nan")
        rows.append(
            {
                "conversation_id": conversation_id,
                "agents": int(group["agent"].nunique()),
                "answer_change_rate": change,
                "final_agreement": agreement,
                "failed_probes": failed,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


def tables_of(rows: list[tuple[Any, ...]], extra: tuple[dict[str, Any], ...] = ()) -> RunTables:
    """(conversation, round, agent, text, status) probe answers, plus other events."""
    events = pd.DataFrame(
        [
            {
                "conversation_id": c,
                "kind": "probe",
                "name": "answer",
                "round": r,
                "agent": a,
                "text": t,
                "status": s,
            }
            for c, r, a, t, s in rows
        ]
        + list(extra)
    )
    empty = RunTables.empty()
    return RunTables(events, empty.labels, empty.conversations, {})


# Each case: its rows and the figures worked out by hand (change, agreement, failed, agents).
CASES: dict[str, tuple[list[tuple[Any, ...]], tuple[float, float, int, int]]] = {
    # A keeps (Paris = "paris!"), B moves: change 1/2; final {paris, paris}: agreement 1.
    "one moves": (
        [
            ("c", 0, "A", "Paris", "ok"),
            ("c", 0, "B", "Lyon", "ok"),
            ("c", 1, "A", "paris!", "ok"),
            ("c", 1, "B", "Paris", "ok"),
        ],
        (0.5, 1.0, 0, 2),
    ),
    # Three final answers x, y, z (a three-way tie): agreement 1/3; all moved: change 1.
    "a tie": (
        [("c", 0, a, "w", "ok") for a in "ABC"]
        + [("c", 2, "A", "x", "ok"), ("c", 2, "B", "y", "ok"), ("c", 2, "C", "z", "ok")],
        (1.0, 1 / 3, 0, 3),
    ),
    # Every probe failed: nothing to compare (NaN, NaN), 4 failed, 2 agents.
    "all failed": (
        [("c", r, a, "", "error") for r in (0, 1) for a in "AB"],
        (math.nan, math.nan, 4, 2),
    ),
    # The first checkpoint failed for both: no pair (change NaN); final {q, q}: agreement 1.
    "first failed": (
        [("c", 0, a, "", "parse_failure") for a in "AB"] + [("c", 3, a, "q", "ok") for a in "AB"],
        (math.nan, 1.0, 2, 2),
    ),
    # C answers only at the end: the pair A keeps, B moves (1/2); final {k, k, m}: 2/3.
    "late agent": (
        [
            ("c", 0, "A", "k", "ok"),
            ("c", 0, "B", "k", "ok"),
            ("c", 1, "A", "k", "ok"),
            ("c", 1, "B", "m", "ok"),
            ("c", 1, "C", "k", "ok"),
        ],
        (0.5, 2 / 3, 0, 3),
    ),
    # One checkpoint only: first = last, nobody moved (0); final {a, b}: 1/2.
    "one checkpoint": ([("c", 0, "A", "a", "ok"), ("c", 0, "B", "b", "ok")], (0.0, 0.5, 0, 2)),
    # Punctuation-only and accented answers: "!!!" and "?" both normalise to "" (same);
    # "Café" and "café." are the same: change 0, agreement 1/2 ({"", "café"}).
    "normalised": (
        [
            ("c", 0, "A", "!!!", "ok"),
            ("c", 0, "B", "Café", "ok"),
            ("c", 1, "A", "?", "ok"),
            ("c", 1, "B", "café.", "ok"),
        ],
        (0.0, 0.5, 0, 2),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_edge_case_matches_the_reference_and_the_hand_computed_figures(case: str) -> None:
    rows, (change, agreement, failed, agents) = CASES[case]
    tables = tables_of(rows)
    figures = conversation_figures(tables)
    pd.testing.assert_frame_equal(figures, reference_figures(tables))
    row = figures.iloc[0]
    for value, expected in (
        (row["answer_change_rate"], change),
        (row["final_agreement"], agreement),
    ):
        assert (math.isnan(value) and math.isnan(expected)) or value == pytest.approx(expected)
    assert (row["failed_probes"], row["agents"]) == (failed, agents)


def test_all_cases_in_one_run_with_other_events_between_them() -> None:
    rows = [(f"{name}", *rest) for name, (case, _) in CASES.items() for _, *rest in case]
    noise = [
        {"conversation_id": "one moves", "kind": "message", "name": "turn", "round": 1,
         "agent": "A", "text": "Paris!", "status": "ok"},
        {"conversation_id": "a tie", "kind": "probe", "name": "confidence", "round": 9,
         "agent": "A", "text": "high", "status": "ok"},
    ]  # fmt: skip
    tables = tables_of(rows, tuple(noise))
    pd.testing.assert_frame_equal(conversation_figures(tables), reference_figures(tables))


def random_run(seed: int, conversations: int) -> RunTables:
    rng = random.Random(seed)
    answers = ["Paris", "paris", "Lyon!", "Rome", "rome ", "", "Né?", "42", "4 2"]
    rows = []
    for c in range(conversations):
        checkpoints = sorted(rng.sample(range(6), rng.randint(1, 4)))
        agents = [chr(65 + a) for a in range(rng.randint(1, 5))]
        for r in checkpoints:
            for a in agents:
                if rng.random() < 0.1:
                    continue  # this agent was not probed here
                status = rng.choice(["ok"] * 8 + ["error", "parse_failure"])
                rows.append((f"c{c:04d}", r, a, rng.choice(answers), status))
    rng.shuffle(rows)  # stored order must not matter
    return tables_of(rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_seeded_random_run_matches_the_reference_exactly(seed: int) -> None:
    tables = random_run(seed, 300)
    pd.testing.assert_frame_equal(conversation_figures(tables), reference_figures(tables))


def test_a_run_without_probes_gives_an_empty_table_and_empty_metrics() -> None:
    empty = RunTables.empty()
    tables = RunTables(empty.events, empty.labels, empty.conversations, {})
    figures = conversation_figures(tables)
    assert list(figures.columns) == COLUMNS and figures.empty
    metrics = discussion_metrics(tables)
    assert metrics.conversations == 0 and metrics.failed_probes == 0
    (cell,) = metrics.by_cell
    assert cell.conversations == 0 and cell.answer_change_rate.skipped is not None


def test_the_normalisation_is_the_references_on_any_text() -> None:
    from backchannel.paradigms.discussion._metrics import normalise_answer

    rng = random.Random(4)
    # ASCII, Latin, Greek, Cyrillic, CJK punctuation, and the odd spaces and separators
    alphabet = [chr(c) for c in range(0x2FFF)] + ["\u3000", "\u2028", "\x1c", "\x85", "İ", "ẞ"]
    texts = [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(20_000)
    ]
    texts += ["", "  A  b!!c ", "Café, ok?", "x\u2028y", "NaN"]
    for text in texts:
        assert normalise_answer(text) == reference_normalise(text), repr(text)
    assert normalise_answer(None) == reference_normalise(None)  # type: ignore[arg-type]
