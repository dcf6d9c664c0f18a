"""`backchannel judge` and `agree` on dyad and council runs (sim models, one conversation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from statsmodels.stats.inter_rater import cohens_kappa
from typer.testing import CliRunner, Result

from backchannel.analysis import RunTables
from backchannel.store import RunStore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def invoke(*args: Any) -> Result:
    from backchannel.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def stored(run: Path) -> RunTables:
    store = RunStore(run)
    try:
        return store.tables()
    finally:
        store.close()


def run_example(name: str, directory: Path) -> Path:
    result = invoke("run", EXAMPLES / name, "-o", directory, "--model", "sim", "--limit", "1")
    assert result.exit_code == 0, result.output
    return directory


def test_dyad_turns_are_judged_and_self_tags_agree_with_a_model_judge(tmp_path: Path) -> None:
    run = run_example("dyad.yaml", tmp_path / "dyad")
    assert invoke("judge", run, "--judge", "rule", "--as", "self").exit_code == 0
    result = invoke("judge", run, "--judge", "sim", "--as", "llm", "--kind", "category")
    assert result.exit_code == 0, result.output
    tables = stored(run)
    events = tables.events
    turns = events[(events["name"] == "turn") & (events["status"] == "ok")]
    self_labels = tables.labels_for("self").merge(
        turns, left_on=["conversation_id", "event_seq"], right_on=["conversation_id", "seq"]
    )
    # The rule judge of the category task reads the speaker's own tag.
    assert len(self_labels) == len(turns) > 0
    assert (self_labels["label"] == self_labels["value"].map(json.loads)).all()
    agreed = invoke("agree", run, "self", "llm", "--json")
    assert agreed.exit_code == 0, agreed.output
    payload = json.loads(agreed.output)
    pairs = tables.labels_for("self")[["event_seq", "label"]].merge(
        tables.labels_for("llm")[["event_seq", "label"]], on="event_seq"
    )
    names = sorted(set(pairs["label_x"]) | set(pairs["label_y"]))
    table = pd.crosstab(pairs["label_x"], pairs["label_y"]).reindex(
        index=names, columns=names, fill_value=0
    )
    assert payload["category"]["n"] == len(turns)
    assert payload["category"]["kappa"] == pytest.approx(cohens_kappa(table.to_numpy()).kappa)
    assert set(payload) == {"category"}  # the dyad has no relabelled outcome
    assert invoke("judge", run, "--judge", "rule", "--as", "x", "--kind", "stance").exit_code == 2


def test_council_rationales_need_a_model_judge_and_advocate_turns_have_a_rule(
    tmp_path: Path,
) -> None:
    run = run_example("council_housing.yaml", tmp_path / "council")
    refused = invoke("judge", run, "--judge", "rule", "--as", "r")
    assert refused.exit_code == 2 and "no rule for rationale" in refused.stderr
    assert invoke("judge", run, "--judge", "sim", "--as", "a").exit_code == 0
    tables = stored(run)
    events = tables.events
    ok = events["status"] == "ok"
    rankings = events[(events["kind"] == "ranking") & ok]
    turns = events[(events["kind"] == "message") & (events["role"] == "advocate") & ok]
    labels = tables.labels_for("a")
    judged = labels.merge(
        events[["conversation_id", "seq", "kind"]],
        left_on=["conversation_id", "event_seq"],
        right_on=["conversation_id", "seq"],
    )
    # Both tasks: each ok ranking's rationale, and each ok advocate turn's argued option.
    on_rankings, on_turns = judged[judged["kind"] == "ranking"], judged[judged["kind"] == "message"]
    assert len(on_rankings) == len(rankings) > 0 and len(on_turns) == len(turns) > 0
    assert len(labels) == len(rankings) + len(turns)
    assert set(on_rankings["label"]) <= {"grounded", "partial", "absent"}
    options = {"rent_control", "deregulation", "public_housing", "none", "several"}
    assert set(on_turns["label"].dropna()) <= options
    # The argued task alone has a rule: run after the run, it reads what the inline rule read.
    assert invoke("judge", run, "--judge", "rule", "--as", "r", "--kind", "argued").exit_code == 0
    relabelled = stored(run)
    key = ["conversation_id", "event_seq", "label"]
    later = relabelled.labels_for("r")[key].sort_values(key[:2]).reset_index(drop=True)
    inline = relabelled.labels_for("argued")[key].sort_values(key[:2]).reset_index(drop=True)
    assert len(later) == len(turns) and later.equals(inline)
    assert invoke("judge", run, "--judge", "sim", "--as", "b").exit_code == 0
    payload = json.loads(invoke("agree", run, "a", "b", "--json").output)
    # The same sim answers the same seeded requests alike: the two judges agree fully.
    assert payload["rationale"]["n"] == len(rankings)
    assert payload["rationale"]["percent_agreement"] == 1.0
