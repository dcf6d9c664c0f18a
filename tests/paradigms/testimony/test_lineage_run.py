"""A full small run on a scripted sim whose speakers cite in markup: the stored claims, the
lineage metrics, the exported citation graph, the LLM extractor through `backchannel judge`
(with its parse failures), and free-text runs without markup."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from backchannel.backends import (
    JsonSchema,
    LabelSet,
    Request,
    register_sim,
    scripted_answer,
    unregister_sim,
)
from backchannel.cli import app
from backchannel.cli._common import load_tables

MODEL = "sim/lineage_script"
EXTRACTOR = "sim/lineage_extract"
_ROUND = re.compile(r"Round (R\d)\.")
extractor_calls: list[Request] = []
speaker_calls: list[Request] = []


def _roles(request: Request) -> list[str]:
    """The five story roles, read from the testimony in view ("Name: (message to ...")."""
    names = re.findall(
        r"^(\w+): \((?:message to everyone|private message to)", request.messages[-1].content, re.M
    )
    return sorted(set(names))


def other(name: str, roles: list[str]) -> str:
    return roles[0] if name != roles[0] else roles[1]


def respond(request: Request) -> str:
    """R1: cite one's own testimony; R2: cite other(self)'s R1; R3: cite other(self)'s R2, plus
    a self, a same-round and a malformed citation that must not count."""
    name = re.match(r"You are (\w+)", request.messages[0].content).group(1)  # type: ignore[union-attr]
    if isinstance(request.constraint, LabelSet):
        return scripted_answer(request)
    speaker_calls.append(request)
    phase = _ROUND.findall(request.messages[-1].content)[-1]
    roles = _roles(request)
    if phase == "R1":
        return f"My own account holds [T:{name}]."
    if phase == "R2":
        return f"I follow [S:{other(name, roles)}@R1]."
    them = other(name, roles)
    return f"Now [S:{them}@R2]. Me before [S:{name}@R1]. Same round [S:{them}@R3]. Broken [T:]."


def extract(request: Request) -> str:
    """The extractor's script: a testimony claim for R1 statements, garbage for the others."""
    extractor_calls.append(request)
    user = request.messages[1].content  # the statement, also when the answer is asked again
    speaker, phase = re.search(r"Statement by (\w+) in round (\w+):", user).groups()  # type: ignore[union-attr]
    if phase != "R1":
        return "I cannot tell."
    return json.dumps(
        {
            "claims": [
                {
                    "source_kind": "testimony",
                    "source_role": speaker,
                    "source_round": "none",
                    "supports": "none",
                }
            ]
        }
    )


@pytest.fixture(autouse=True)
def scripted() -> Iterator[None]:
    extractor_calls.clear()
    speaker_calls.clear()
    register_sim("lineage_script", respond)
    register_sim("lineage_extract", extract)
    yield
    unregister_sim("lineage_script")
    unregister_sim("lineage_extract")


def run(tmp_path: Path, **settings: Any) -> Path:
    data = {
        "name": "lineage-test",
        "paradigm": "testimony",
        "seed": 3,
        "factors": {"condition": ["C0", "C1"]},
        "items_limit": 2,
        "settings": {"model": MODEL, "max_tokens": 64, **settings},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    return tmp_path / "run"


def expected_orders(roles: list[str]) -> dict[tuple[str, str], dict[str, int]]:
    """Worked out from the script: R1 carries one's own testimony at 1, R2 other(x)'s at 2,
    R3 other(other(x))'s at 3."""
    found = {}
    for x in roles:
        found[(x, "R1")] = {x: 1}
        found[(x, "R2")] = {other(x, roles): 2}
        found[(x, "R3")] = {other(other(x, roles), roles): 3}
    return found


def test_markup_run_stores_claims_and_lineage(tmp_path: Path) -> None:
    directory = run(tmp_path)
    assert all("[T:Name]" in r.messages[-1].content for r in speaker_calls)
    tables = load_tables(directory, None)
    labels = tables.labels_for("citations")
    statements = tables.events[tables.events["name"] == "statement"]
    assert len(labels) == len(statements) == 4 * 5 * 3
    runner = CliRunner()
    metrics = runner.invoke(app, ["metrics", str(directory), "--json"])
    assert metrics.exit_code == 0, metrics.output
    lineage = json.loads(metrics.output)["lineage"]
    assert lineage["judges"] == ["citations"]
    found = lineage["by_judge"]["citations"]
    # every R3 statement has one self, one same-round and one malformed citation
    assert found["extraction"]["invalid_citations"] == {
        "later_round": 20,
        "malformed": 20,
        "self": 20,
    }
    assert found["extraction"]["claims"] == 60
    # the exported graph: one row per claim and per invalid citation
    out = tmp_path / "tables"
    exported = runner.invoke(app, ["export", str(directory), "-o", str(out), "--format", "csv"])
    assert exported.exit_code == 0, exported.output
    graph = pd.read_csv(out / "citations.csv")
    assert (graph["status"] == "ok").sum() == 60
    assert set(graph["status"]) == {"ok", "self", "later_round", "malformed"}
    events = tables.events.set_index(["conversation_id", "seq"])
    for row in graph[graph["status"] == "ok"].to_dict("records"):
        cited = events.loc[(row["conversation_id"], int(row["source_seq"]))]
        assert cited["agent"] == row["source_agent"]
        wanted = "testimony" if row["source_kind"] == "testimony" else "statement"
        assert cited["name"] == wanted
    report = runner.invoke(app, ["report", str(directory)])
    assert report.exit_code == 0, report.output
    html = (directory / "report" / "report.html").read_text(encoding="utf-8")
    for heading in ("Evidence lineage", "Evidence roots"):
        assert heading in html


def test_citation_rates_match_the_script(tmp_path: Path) -> None:
    directory = run(tmp_path)
    tables = load_tables(directory, None)
    found = json.loads(CliRunner().invoke(app, ["metrics", str(directory), "--json"]).output)
    rows = found["lineage"]["by_judge"]["citations"]["citation"]
    metas = [json.loads(m) for m in tables.conversations["meta"]]
    for condition in ("C0", "C1"):
        for testimony in ("key", "second_key"):
            for phase in ("R1", "R2", "R3"):
                carrying, members = [], 0
                for meta in (m for m in metas if m["condition"] == condition):
                    orders = expected_orders(sorted(meta["environment"]["roles"]))
                    sender = meta[testimony]
                    for a in meta["agents"]:
                        if a["role"] == "member":
                            members += 1
                            if sender in orders[(a["name"], phase)]:
                                carrying.append(orders[(a["name"], phase)][sender])
                (row,) = [
                    r
                    for r in rows
                    if r["condition"] == condition
                    and r["testimony"] == testimony
                    and r["phase"] == phase
                ]
                assert row["statements"] == members == 6
                assert row["citation_rate"] == pytest.approx(len(carrying) / members)
                direct = len(carrying) if phase == "R1" else 0
                assert row["direct_rate"] == pytest.approx(direct / members)
                if carrying:
                    assert row["mean_order"] == pytest.approx(sum(carrying) / len(carrying))


def test_llm_extractor_through_judge_stores_claims_and_parse_failures(tmp_path: Path) -> None:
    directory = run(tmp_path)
    runner = CliRunner()
    result = runner.invoke(
        app, ["judge", str(directory), "--judge", EXTRACTOR, "--as", "citations_llm"]
    )
    assert result.exit_code == 0, result.output
    assert "parse_failure: 40" in result.output and "ok: 20" in result.output
    request = extractor_calls[0]
    assert isinstance(request.constraint, JsonSchema)
    assert request.settings.temperature == 0.0
    tables = load_tables(directory, None)
    llm = tables.labels_for("citations_llm")
    assert len(llm) == 60
    assert (llm["status"] == "parse_failure").sum() == 40
    assert llm[llm["status"] == "parse_failure"]["label"].isna().all()
    assert set(llm[llm["status"] == "parse_failure"]["text"]) == {"I cannot tell."}
    # the R1 labels agree exactly with the markup's
    markup = tables.labels_for("citations").set_index(["conversation_id", "event_seq"])["label"]
    ok = llm[llm["status"] == "ok"]
    for row in ok.to_dict("records"):
        assert row["label"] == markup.loc[(row["conversation_id"], row["event_seq"])]
    lineage = json.loads(runner.invoke(app, ["metrics", str(directory), "--json"]).output)[
        "lineage"
    ]
    assert lineage["judges"] == ["citations", "citations_llm"]
    summary = lineage["by_judge"]["citations_llm"]["extraction"]
    assert summary["by_status"] == {"ok": 20, "parse_failure": 40}
    agree = runner.invoke(app, ["agree", str(directory), "citations", "citations_llm", "--json"])
    assert agree.exit_code == 0, agree.output
    found = json.loads(agree.output)
    assert (found["statements"], found["both_extracted"], found["failed_b_only"]) == (60, 20, 40)
    assert (found["exact_agreement"], found["precision"], found["recall"]) == (1.0, 1.0, 1.0)
    # R1: each speaker cites its own testimony, so the key's is cited once per conversation
    assert found["kappa_cites_key"] == 1.0


def test_judge_refuses_a_citation_name_without_the_prefix(tmp_path: Path) -> None:
    directory = run(tmp_path)
    result = CliRunner().invoke(app, ["judge", str(directory), "--judge", EXTRACTOR, "--as", "llm"])
    assert result.exit_code == 2
    assert "starting with `citations`" in result.output


def test_free_text_runs_ask_for_no_markup_and_store_no_claims(tmp_path: Path) -> None:
    directory = run(tmp_path, citation_markup=False)
    assert tables_of(directory).labels_for("citations").empty
    assert speaker_calls and not any("[T:Name]" in r.messages[-1].content for r in speaker_calls)
    rule = CliRunner().invoke(
        app, ["judge", str(directory), "--judge", "rule", "--as", "citations"]
    )
    assert rule.exit_code == 0, rule.output
    assert len(tables_of(directory).labels_for("citations")) == 60


def tables_of(directory: Path) -> Any:
    return load_tables(directory, None)
