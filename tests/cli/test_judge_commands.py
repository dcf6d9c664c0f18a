"""`backchannel judge`, `agree` and `screen` through the command line, on sim models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from statsmodels.stats.inter_rater import cohens_kappa
from typer.testing import CliRunner, Result

from backchannel.analysis import RunTables
from backchannel.backends import Request, register_sim, unregister_sim
from backchannel.datasets import load_items, load_shipped
from backchannel.paradigms.peer_pressure import PeerPressure, PeerPressureSettings
from backchannel.store import RunStore


def invoke(*args: Any) -> Result:
    from backchannel.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


VARIED = "varied"


def varied(request: Request) -> str:
    """The true answer, the false one, both or neither, by the request's seed."""
    text = request.messages[-1].content
    fact = next(f for f in load_shipped("counterfact", 2) if f.question in text)
    choice = (request.seed or 0) % 4
    return (
        f"It is {fact.true_answer}.",
        f"It is {fact.false_answer}.",
        f"{fact.true_answer} or {fact.false_answer}.",
        "No idea.",
    )[choice]


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Path]:
    """A stored run without labels: 2 items x k in {0, 1}, 3 agents, 2 rounds, answers that
    vary between the true answer, the false one, both and neither."""
    register_sim(VARIED, varied)
    data = {
        "name": "judge-test",
        "paradigm": "peer_pressure",
        "seed": 1,
        "factors": {"model": [f"sim/{VARIED}"], "k": [0, 1]},
        "settings": {
            "datasets": [{"name": "counterfact", "limit": 2}],
            "n_agents": 3,
            "rounds": 2,
            "judge": None,
        },
    }
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    directory = tmp_path / "run"
    result = invoke("run", path, "-o", directory)
    assert result.exit_code == 0, result.output
    yield directory
    unregister_sim(VARIED)


def tables_of(directory: Path) -> RunTables:
    store = RunStore(directory)
    try:
        return store.tables()
    finally:
        store.close()


def test_judge_labels_honest_events_under_a_name(run: Path) -> None:
    result = invoke("judge", run, "--judge", "rule", "--as", "rule")
    assert result.exit_code == 0, result.output
    tables = tables_of(run)
    labels = tables.labels
    # Per item: k=0 has 3 honest agents x 3 checkpoints = 9 answers and 3 x 2 = 6 turns; k=1 has
    # 2 x 3 = 6 answers and 2 x 2 = 4 turns. Two items: 2 x (15 + 10) = 50 events.
    assert len(labels) == 50 and set(labels["judge"]) == {"rule"}
    assert set(labels["model"]) == {"rule"} and set(labels["status"]) == {"ok"}
    assert "labelled 50 events" in result.output
    events = tables.events.set_index(["conversation_id", "seq"])
    judged = events.loc[list(zip(labels["conversation_id"], labels["event_seq"], strict=True))]
    assert set(judged["role"]) == {"honest"}


def test_judge_samples_one_kind_with_a_model_and_judges_coexist(run: Path) -> None:
    assert invoke("judge", run, "--judge", "rule", "--as", "rule").exit_code == 0
    result = invoke("judge", run, "--judge", "sim", "--as", "llm", "--kind", "private",
                    "--sample", "7")  # fmt: skip
    assert result.exit_code == 0, result.output
    tables = tables_of(run)
    llm = tables.labels_for("llm")
    assert len(llm) == 7 and set(llm["model"]) == {"sim"}
    kinds = tables.events.merge(
        llm, left_on=["conversation_id", "seq"], right_on=["conversation_id", "event_seq"]
    )["kind"]
    assert set(kinds) == {"probe"}
    assert len(tables.labels_for("rule")) == 50
    # The judge's calls went through the run's response cache: a second pass is all hits.
    again = invoke("judge", run, "--judge", "sim", "--as", "llm", "--kind", "private",
                   "--sample", "7")  # fmt: skip
    assert again.exit_code == 0
    assert tables_of(run).labels_for("llm")["text"].tolist() == llm["text"].tolist()


def test_judge_refuses_bad_options(run: Path) -> None:
    assert invoke("judge", run, "--judge", "rule", "--as", "bad name").exit_code == 2
    assert invoke("judge", run, "--judge", "rule", "--as", "x", "--kind", "both").exit_code == 2
    assert invoke("judge", run, "--judge", "nowhere/model", "--as", "x").exit_code == 2


def _pairs(tables: RunTables, a: str, b: str, private: bool) -> pd.DataFrame:
    events = tables.events
    if private:
        chosen = events[(events["kind"] == "probe") & (events["name"] == "answer")]
    else:
        chosen = events[(events["kind"] == "message") & (events["name"] == "turn")]
    chosen = chosen[chosen["role"] == "honest"][["conversation_id", "seq"]]
    for judge in (a, b):
        labels = tables.labels_for(judge)[["conversation_id", "event_seq", "label"]]
        labels = labels.rename(columns={"event_seq": "seq", "label": judge})
        chosen = chosen.merge(labels, on=["conversation_id", "seq"])
    return chosen


def test_agree_matches_statsmodels_kappa_and_plain_agreement(run: Path) -> None:
    assert invoke("judge", run, "--judge", "rule", "--as", "rule").exit_code == 0
    assert invoke("judge", run, "--judge", "sim", "--as", "llm").exit_code == 0
    result = invoke("agree", run, "rule", "llm", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    tables = tables_of(run)
    for channel in ("private", "public"):
        pairs = _pairs(tables, "rule", "llm", channel == "private")
        names = sorted(set(pairs["rule"]) | set(pairs["llm"]))
        table = pd.crosstab(pairs["rule"], pairs["llm"]).reindex(
            index=names, columns=names, fill_value=0
        )
        assert payload[channel]["n"] == len(pairs)
        assert payload[channel]["percent_agreement"] == pytest.approx(
            float((pairs["rule"] == pairs["llm"]).mean())
        )
        assert len(names) > 2  # the labels vary, so the comparison says something
        expected = cohens_kappa(table.to_numpy()).kappa
        assert payload[channel]["kappa"] == pytest.approx(expected)
    assert "reweighted_fpi" in payload and "transfer" in payload["reweighted_fpi"]
    text = invoke("agree", run, "rule", "llm")
    assert text.exit_code == 0 and "kappa=" in text.output


def test_agree_names_missing_judges(run: Path) -> None:
    assert invoke("judge", run, "--judge", "rule", "--as", "rule").exit_code == 0
    result = invoke("agree", run, "rule", "nobody")
    assert result.exit_code == 2 and "nobody" in result.output


SCREEN = "screener"


@pytest.fixture
def screener() -> Iterator[None]:
    """Item 0: always the true answer; item 1: the false answer in replicate 0, else true;
    item 2: "I do not know"."""
    facts = list(load_shipped("popqa", 3))

    def answer(request: Request) -> str:
        text = request.messages[-1].content
        index = next(i for i, fact in enumerate(facts) if fact.question in text)
        if index == 0:
            return facts[0].true_answer
        if index == 1:
            return facts[1].false_answer if request.replicate == 0 else facts[1].true_answer
        return "I do not know."

    register_sim(SCREEN, answer)
    yield
    unregister_sim(SCREEN)


def test_screen_keeps_the_items_a_model_knows(tmp_path: Path, screener: None) -> None:
    output = tmp_path / "screened" / "popqa.jsonl"
    result = invoke("screen", "--model", f"sim/{SCREEN}", "--dataset", "popqa", "--limit", "3",
                    "--samples", "3", "-o", output)  # fmt: skip
    assert result.exit_code == 0, result.output
    facts = list(load_shipped("popqa", 3))
    # Item 0: 3/3 true -> kept. Item 1: 2/3 true (< 0.8) and 1/3 false (> 0.05) -> excluded.
    # Item 2: 0/3 true -> excluded.
    kept = load_items(output)
    assert [item.item_id for item in kept] == [facts[0].item_id]
    rates = pd.read_csv(output.with_name("popqa.jsonl.rates.csv"))
    assert rates["kept"].tolist() == [True, False, False]
    assert rates["correct"].tolist() == pytest.approx([1.0, 2 / 3, 0.0])
    assert rates["false"].tolist() == pytest.approx([0.0, 1 / 3, 0.0])
    assert rates["reason"].fillna("").tolist() == [
        "",
        "correct < 0.8; false > 0.05",
        "correct < 0.8",
    ]
    assert "kept 1 of 3 items" in result.output
    # The screened file feeds an experiment as a dataset of format `items`.
    settings = PeerPressureSettings.model_validate(
        {"datasets": [{"name": "popqa", "path": str(output), "format": "items"}]}
    )
    (item,) = PeerPressure().items(settings, 0)
    assert item.item_id == facts[0].item_id.replace("/", ":")


def test_screen_refuses_unknown_datasets(tmp_path: Path) -> None:
    result = invoke("screen", "--model", "sim", "--dataset", "elsewhere", "-o", tmp_path / "x")
    assert result.exit_code == 2


def test_agreement_line_says_why_kappa_is_missing() -> None:
    from backchannel.judges._labelling import agreement_line

    result = {
        "n": 3,
        "percent_agreement": 1.0,
        "kappa": float("nan"),
        "skipped": "both raters gave every item the same single label: kappa is 0/0",
    }
    line = agreement_line("private", result)
    assert "kappa not computed (both raters gave every item the same single label" in line
    assert line.startswith("private: n=3  agreement=1.000")
