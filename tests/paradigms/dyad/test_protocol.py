"""A full small dyad design on scripted `sim` models: events, estimate, privacy, metrics, report."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from backchannel.backends import IntRange, JsonSchema, Request, register_sim, unregister_sim
from backchannel.backends._sim import request_digest
from backchannel.cli import app
from backchannel.cli._common import load_tables

MODELS = ["sim/dyad_a", "sim/dyad_b"]
MARKER = "zq-private-rating"
CATEGORIES = ["ACCEPT", "REJECT", "IGNORE"]
captured: list[Request] = []


def respond(request: Request) -> str:
    """Ratings carry a marker that must never reach another prompt; turns answer in JSON."""
    captured.append(request)
    number = int.from_bytes(request_digest(request)[:4], "big")
    if isinstance(request.constraint, IntRange):
        return f"{number % 7} {MARKER}"
    if isinstance(request.constraint, JsonSchema):
        argument = f"Argument {number % 1000} from {request.model}."
        return json.dumps({"argument": argument, "category": CATEGORIES[number % 3]})
    return f"Opening by {request.model}."


@pytest.fixture(autouse=True)
def scripted() -> Iterator[None]:
    captured.clear()
    for model in MODELS:
        register_sim(model.split("/")[1], respond)
    yield
    for model in MODELS:
        unregister_sim(model.split("/")[1])


def run_design(tmp_path: Path, rounds: int = 2) -> tuple[Path, int]:
    experiment = {
        "name": "dyad-test",
        "paradigm": "dyad",
        "seed": 5,
        "replicates": 1,
        "factors": {
            "discussant_model": MODELS,
            "opponent_model": MODELS,
            "stance": ["human", "neutral", "natural"],
            "style": ["manipulative", "plain"],
            "wording": ["first", "opposite"],
        },
        "settings": {"rounds": rounds},
    }
    path = tmp_path / "dyad.yaml"
    path.write_text(yaml.safe_dump(experiment))
    runner = CliRunner()
    dry = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / "dry"), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    match = re.search(r"estimated calls: ([\d,]+)", dry.output)
    assert match, dry.output
    result = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    return tmp_path / "run", int(match.group(1).replace(",", ""))


def test_full_design_on_sim(tmp_path: Path) -> None:
    run, estimated = run_design(tmp_path)
    tables = load_tables(run, None)
    conversations = tables.conversations
    assert len(conversations) == 2 * 2 * 3 * 2 * 2
    assert set(conversations["status"]) == {"done"}
    events = tables.events
    # per conversation: 2 x (T + 1) ratings + opening + 2T turns = 6 + 1 + 4 = 11 calls
    assert len(events) == 48 * 11 == estimated == len(captured)
    for _, frame in events.groupby("conversation_id"):
        messages = frame[frame["kind"] == "message"].sort_values("seq")
        assert list(messages["name"]) == ["opening"] + ["turn"] * 4
        assert list(messages["round"]) == [0, 1, 1, 2, 2]
        roles = ["discussant", "discussant", "opponent", "discussant", "opponent"]
        assert list(messages["role"]) == roles
        assert list(messages["turn"]) == [0, 0, 1, 0, 1]
        turns = messages[messages["name"] == "turn"]
        assert all(json.loads(v) in CATEGORIES for v in turns["value"])
        ratings = frame[frame["kind"] == "rating"]
        assert set(ratings["name"]) == {"self_rating"} and set(ratings["channel"]) == {"private"}
        assert sorted(ratings["round"]) == [0, 0, 1, 1, 2, 2]
        assert all(0 <= json.loads(v) <= 6 for v in ratings["value"])
    one = conversations.iloc[0]
    meta = json.loads(one["meta"])
    assert meta["rounds"] == 2 and meta["statement_shown"] in (meta["first"], meta["opposite"])
    # the private ratings never enter any prompt
    assert not any(MARKER in m.content for request in captured for m in request.messages)
    # the Opponent's stance and style reach only the Opponent's prompts
    manipulative = [r for r in captured if any("manipulation" in m.content for m in r.messages)]
    assert manipulative and all("Opponent" in r.messages[0].content for r in manipulative)

    runner = CliRunner()
    result = runner.invoke(app, ["metrics", str(run), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["counts"]["finished_conversations"] == 48
    assert figures["counts"]["excluded_from_shift"] == 0
    assert len(figures["pairings"]) == 4
    assert figures["shifts"]["overall"]["shift_discussant"]["n"] == 48
    assert "skipped" not in figures["tests"]["models"]["gap_change"]["main"]
    report = runner.invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    assert (run / "report" / "report.html").exists()
    assert (run / "report" / "wald_tests.csv").exists()


def test_invalid_level_is_a_config_error(tmp_path: Path) -> None:
    experiment = {
        "name": "bad",
        "paradigm": "dyad",
        "factors": {"stance": ["sideways"]},
        "settings": {"discussant_model": MODELS[0], "opponent_model": MODELS[1]},
    }
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(experiment))
    result = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "r"), "--dry-run"])
    assert result.exit_code == 2
    assert "stance" in result.output


def test_example_is_the_full_480_conversation_design(tmp_path: Path) -> None:
    example = Path(__file__).parents[3] / "examples" / "dyad.yaml"
    result = CliRunner().invoke(
        app, ["run", str(example), "-o", str(tmp_path / "dry"), "--dry-run"]
    )
    assert result.exit_code == 0, result.output
    assert "conversations: 480" in result.output
    # 480 conversations x (2 x 21 ratings + opening + 40 turns) = 480 x 83
    assert "estimated calls: 39,840" in result.output or "estimated calls: 39840" in result.output
