"""The shared agreement layer on hand-built labels: kappa against statsmodels, pairing, transfer
rates and reweighting."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

from backchannel.analysis import CONVERSATION_BASE_COLUMNS, EVENT_COLUMNS, LABEL_COLUMNS, RunTables
from backchannel.judges import (
    agreement,
    confusion_mapping,
    paired_labels,
    reweight,
    transfer_rates,
)


def label(seq: int, judge: str, value: str | None, status: str = "ok") -> dict[str, Any]:
    return {"run_id": "r", "conversation_id": "c", "event_seq": seq, "judge": judge,
            "label": value, "status": status, "text": "", "model": "m"}  # fmt: skip


def tables(labels: list[dict[str, Any]]) -> RunTables:
    return RunTables(
        pd.DataFrame(columns=EVENT_COLUMNS),
        pd.DataFrame(labels, columns=LABEL_COLUMNS),
        pd.DataFrame(columns=CONVERSATION_BASE_COLUMNS),
    )


def test_paired_labels_keep_events_both_judges_labelled_validly() -> None:
    run = tables([
        label(0, "a", "x"), label(0, "b", "x"),
        label(1, "a", "x"), label(1, "b", "y"),
        label(2, "a", "y"), label(2, "b", None, "parse_failure"),  # B failed: left out
        label(3, "a", "y"),                                        # B never labelled it
        label(4, "a", "y"), label(4, "b", "y"),                    # not among the events
    ])  # fmt: skip
    events = pd.DataFrame({"conversation_id": ["c"] * 4, "seq": [0, 1, 2, 3]})
    pairs = paired_labels(run, "a", "b", events)
    assert pairs[["seq", "a", "b"]].values.tolist() == [[0, "x", "x"], [1, "x", "y"]]


def test_agreement_by_hand_and_kappa_against_statsmodels() -> None:
    # 10 pairs: a=x,b=x 4; a=x,b=y 1; a=y,b=y 3; a=y,b=x 2. Observed 7/10; expected
    # (5*6 + 5*4) / 100 = 0.5, so kappa = (0.7 - 0.5) / 0.5 = 0.4.
    a = ["x"] * 5 + ["y"] * 5
    b = ["x"] * 4 + ["y"] + ["y"] * 3 + ["x"] * 2
    result = agreement(pd.DataFrame({"a": a, "b": b}), "A", "B")
    assert result["n"] == 10 and result["percent_agreement"] == pytest.approx(0.7)
    assert result["kappa"] == pytest.approx(0.4)
    assert result["kappa"] == pytest.approx(sm_kappa(result["confusion"].to_numpy()).kappa)
    assert confusion_mapping(result["confusion"]) == {"x": {"x": 4, "y": 1}, "y": {"x": 2, "y": 3}}


def test_an_empty_or_single_label_table_has_no_kappa() -> None:
    empty = agreement(pd.DataFrame({"a": [], "b": []}), "A", "B")
    assert empty["n"] == 0 and pd.isna(empty["kappa"]) and pd.isna(empty["percent_agreement"])
    assert empty["skipped"] == "no item labelled by both"
    single = agreement(pd.DataFrame({"a": ["x"] * 3, "b": ["x"] * 3}), "A", "B")
    assert pd.isna(single["kappa"]) and "0/0" in single["skipped"]


def test_transfer_rates_and_reweighting() -> None:
    # B says "bad" for 1 of 2 A-"bad" and for 1 of 4 A-"good" labels.
    pairs = pd.DataFrame({"a": ["bad", "bad", "good", "good", "good", "good"],
                          "b": ["bad", "good", "bad", "good", "good", "good"]})  # fmt: skip
    rates = transfer_rates(pairs, "bad")
    assert rates.to_dict() == {"bad": 0.5, "good": 0.25}
    weighted = reweight(pd.Series(["good", "bad", "odd"]), rates)
    assert weighted.tolist()[:2] == [0.25, 0.5] and pd.isna(weighted.iloc[2])
