"""Paired arms of a story share their common calls: the same seeds where the prompt is the same,
so T0 is identical across C0 and C1, the shared calls are made once, and the dry run predicts
how many."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from backchannel.cli import app
from backchannel.cli._common import load_tables


def design(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "pairs",
        "paradigm": "testimony",
        "seed": 11,
        "factors": {"condition": ["C0", "C1"], "intervention": ["none", "passive_observers"]},
        "exclude": [{"condition": "C0", "intervention": "passive_observers"}],
        "items_limit": 3,
        "settings": {"model": "sim", "max_tokens": 32},
    }
    data.update(extra)
    return data


def run(tmp_path: Path, data: dict[str, Any], name: str) -> tuple[Path, str]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    runner = CliRunner()
    dry = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / "dry"), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    done = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / name)])
    assert done.exit_code == 0, done.output
    return tmp_path / name, dry.output


def t0_answers(directory: Path) -> dict[tuple[str, str], dict[str, tuple[str, bool]]]:
    """(story, arm) -> agent -> (T0 vote, answered from the cache)."""
    tables = load_tables(directory, None)
    arms = {
        r["conversation_id"]: (r["item_id"], f"{r['condition']}/{r['intervention']}")
        for r in tables.conversations.to_dict(orient="records")
    }
    found: dict[tuple[str, str], dict[str, tuple[str, bool]]] = {}
    votes = tables.events[(tables.events["name"] == "vote") & (tables.events["round"] == 0)]
    for row in votes.to_dict(orient="records"):
        found.setdefault(arms[row["conversation_id"]], {})[row["agent"]] = (
            row["text"],
            bool(row["cached"]),
        )
    return found


def test_t0_is_identical_across_arms_and_made_once(tmp_path: Path) -> None:
    directory, dry = run(tmp_path, design(), "shared")
    tables = load_tables(directory, None)
    keys = {
        json.loads(m)["environment"]["id"]: json.loads(m)["key"]
        for m in tables.conversations["meta"]
    }
    answers = t0_answers(directory)
    for story, key in keys.items():
        arms = [answers[(story, arm)] for arm in ("C0/none", "C1/none", "C1/passive_observers")]
        for agent in arms[0]:
            if agent == key:
                continue  # the key's prompt says it lies in C1
            texts = {arm[agent][0] for arm in arms}
            assert len(texts) == 1, (story, agent)
            # One of the three arms made the call; the two others were answered by it.
            assert sorted(arm[agent][1] for arm in arms) == [False, True, True]
    shared = sum(int(json.loads(m).get("shared_calls", 0)) for m in tables.conversations["meta"])
    # Per story: 4 shared T0 votes in each of two arms at least, and the passive arm's
    # participants repeat C1 whole (40 calls).
    assert shared >= 3 * (2 * 4 + 40 - 4)
    # The dry run predicts exactly what the run shares (on the scripted sim an answer is fixed
    # by its request), and the status says it.
    assert f"calls shared by paired arms: {shared} (made once" in dry
    status = CliRunner().invoke(app, ["status", str(directory)])
    assert f"calls shared by paired arms: {shared} " in status.output


def test_passive_observers_read_the_frozen_c1_record(tmp_path: Path) -> None:
    directory, _ = run(tmp_path, design(), "frozen")
    tables = load_tables(directory, None)
    events = tables.events
    by_arm = {
        (r["item_id"], r["intervention"]): r["conversation_id"]
        for r in tables.conversations.to_dict(orient="records")
        if r["condition"] == "C1"
    }
    columns = ["agent", "round", "name", "text", "value", "status"]
    for (story, intervention), cid in by_arm.items():
        if intervention != "passive_observers":
            continue
        mine = events[(events["conversation_id"] == cid) & (events["role"] != "observer")]
        bare = events[events["conversation_id"] == by_arm[(story, "none")]]
        # The participants' record is the C1 record, event for event, and cost no new call
        # beyond those C1 made (each was made once, in one of the two arms).
        assert mine[columns].reset_index(drop=True).equals(bare[columns].reset_index(drop=True))
        # Of every participant call, at most one of the two arms paid for it.
        made_here = ~mine[mine["model"] != ""]["cached"].astype(bool).reset_index(drop=True)
        made_there = ~bare[bare["model"] != ""]["cached"].astype(bool).reset_index(drop=True)
        assert len(made_here) == 40 and not (made_here & made_there).any()


def test_sharing_can_be_turned_off(tmp_path: Path) -> None:
    directory, dry = run(tmp_path, design(share_paired_calls=False), "apart")
    tables = load_tables(directory, None)
    metas = [json.loads(m) for m in tables.conversations["meta"]]
    assert not any(m.get("shared_calls") for m in metas)
    assert "calls shared by paired arms" not in dry
    assert not tables.events["cached"].any()
    answers = t0_answers(directory)
    differ = [
        agent
        for (story, arm), votes in answers.items()
        if arm == "C0/none"
        for agent, (text, _) in votes.items()
        if text != answers[(story, "C1/none")][agent][0]
    ]
    assert differ  # seeds of their own: the scripted answers of the arms part


def test_paired_tests_count_stories(tmp_path: Path) -> None:
    directory, _ = run(tmp_path, design(), "n")
    metrics = CliRunner().invoke(app, ["metrics", str(directory), "--json"])
    figures = json.loads(metrics.output)
    overall = [g for g in figures["condition_gaps"] if g["split"] == "all"]
    assert overall and {g["n"] for g in overall} == {3}
