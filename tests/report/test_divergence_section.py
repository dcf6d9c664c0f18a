"""The "Say versus believe" section: drawn by the shared report layer from the divergence
section of the metrics, in the same layout whatever the paradigm."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from backchannel.analysis import STANCE_PAIR_COLUMNS, Design, divergence
from backchannel.report import Report, divergence_section
from backchannel.report._divergence import comparisons_frame, shares_frame, skipped_frame


def _section():
    rows = []
    for cid, _k, flags in (
        ("a", 0, [(False, False), (False, True)]),
        ("b", 0, [(False, False), None]),
        ("c", 1, [(True, False), (False, True)]),
        ("d", 1, [(True, True), (False, True)]),
    ):
        for rnd, flag in enumerate(flags, start=1):
            public, private = flag if flag else (pd.NA, pd.NA)
            rows.append(
                {
                    "conversation_id": cid,
                    "agent": "x",
                    "role": "member",
                    "round": rnd,
                    "turn_seq": rnd,
                    "probe_seq": rnd + 1,
                    "public_moved": public,
                    "private_moved": private,
                    "agree": pd.NA if flag is None else public == private,
                    "skipped": None if flag else "probe failed",
                }
            )
    pairs = pd.DataFrame(rows, columns=list(STANCE_PAIR_COLUMNS))
    for column in ("public_moved", "private_moved", "agree"):
        pairs[column] = pairs[column].astype("boolean")
    conversations = pd.DataFrame(
        {
            "conversation_id": ["a", "b", "c", "d"],
            "cell": ['{"k": 0}', '{"k": 0}', '{"k": 1}', '{"k": 1}'],
            "k": [0, 0, 1, 1],
            "item_id": ["q1", "q2", "q1", "q2"],
            "replicate": [0, 0, 0, 0],
        }
    )
    return divergence(pairs, Design(("k",)), conversations)


def test_tables_carry_every_row_and_share():
    section = _section()
    shares = shares_frame(section.by_cell)
    assert list(shares[["k", "round"]].itertuples(index=False, name=None)) == [
        (0, 1),
        (0, 2),
        (1, 1),
        (1, 2),
    ]
    # k = 1, round 2: both pairs hidden change
    last = shares.iloc[3]
    assert (last["n"], last["hidden_change_share"], last["divergent_share"]) == (2, 1.0, 1.0)
    skipped = skipped_frame(section.by_cell)
    assert skipped.to_dict("records") == [
        {"k": 0, "round": 2, "role": "member", "reason": "probe failed", "pairs": 1}
    ]
    tests = comparisons_frame(section)
    assert set(tests["measure"]) == {"hidden_change", "public_accommodation", "divergent"}
    assert set(tests["first"]) == {"k=0"} and set(tests["second"]) == {"k=1"}


def test_section_in_the_page(tmp_path: Path):
    report = Report("run")
    divergence_section(report, _section())
    page = report.write(tmp_path).read_text()
    assert "Say versus believe" in page
    for name in ("divergence", "divergence_skipped", "divergence_tests"):
        assert (tmp_path / f"{name}.csv").exists()
    text = re.sub(r"<[^>]+>", " ", page)
    assert "100.0%" in text  # shares shown as percentages
    assert "Wilcoxon signed-rank" in text
    assert (tmp_path / "figure-1.svg").exists() and (tmp_path / "figure-1.csv").exists()
    drawn = pd.read_csv(tmp_path / "figure-1.csv")
    assert set(drawn["measure"]) == {"hidden change", "public accommodation"}
    assert len(drawn) == 8  # two cells x two rounds x two measures


def test_empty_section_says_so(tmp_path: Path):
    section = _section().model_copy(update={"by_cell": [], "tests": []})
    report = Report("run")
    divergence_section(report, section)
    assert "No stance pairs" in report.write(tmp_path).read_text()
