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
    assert figures["shifts"]["overall"][0]["shift_discussant"]["n"] == 48
    assert len(figures["shifts"]["by_cell"]) == 48  # one conversation per cell
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


def run_one(tmp_path: Path, rounds: int = 2, **factors: list[str]) -> Path:
    """One conversation (every factor at one level) on the scripted models."""
    experiment = {
        "name": "dyad-one",
        "paradigm": "dyad",
        "seed": 9,
        "replicates": 1,
        "factors": {
            "discussant_model": [MODELS[0]],
            "opponent_model": [MODELS[1]],
            "stance": ["human"],
            **factors,
        },
        "settings": {"rounds": rounds},
    }
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(experiment))
    result = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    return tmp_path / "run"


def test_the_other_role_reads_the_argument_and_its_category(tmp_path: Path) -> None:
    run = run_one(tmp_path)
    events = load_tables(run, None).events
    turns = events[events["name"] == "turn"].sort_values("seq")
    # stored: the raw JSON as text, the category as value, the argument in meta
    shown = []
    for row in turns.to_dict("records"):
        answer = json.loads(row["text"])
        assert json.loads(row["value"]) == answer["category"]
        assert json.loads(row["meta"])["argument"] == answer["argument"]
        shown.append(f"{answer['argument']}\n\nCategory: {answer['category']}")
    d1, o1, d2, _ = shown
    prompts = [r.messages[-1].content for r in captured if isinstance(r.constraint, JsonSchema)]
    # the Opponent's round-1 prompt shows the Discussant's round-1 argument, not its JSON
    assert f"Discussant: {d1}" in prompts[1]
    # the Discussant's round-2 prompt shows its own turn and the Opponent's, both as text
    assert f"You: {d1}" in prompts[2] and f"Opponent: {o1}" in prompts[2]
    # the Opponent's round-2 prompt shows the Discussant's round-2 turn
    assert f"Discussant: {d2}" in prompts[3] and f"You: {o1}" in prompts[3]
    ratings = [r.messages[-1].content for r in captured if isinstance(r.constraint, IntRange)]
    assert any(f"Opponent: {o1}" in p for p in ratings)
    # no prompt (turn or rating) carries a turn's raw JSON answer
    raw = list(turns["text"])
    assert not any(text in p for text in raw for p in prompts + ratings)


def test_postprocess_and_shown_on_ok_and_unreadable_turns() -> None:
    from backchannel.engine import Event
    from backchannel.paradigms.dyad._protocol import reduce_to_category, shown_turn

    def turn(text: str, value: object, status: str) -> Event:
        return Event(
            0, "message", "turn", 1, 0, "Opponent", "opponent", "public", text, value, status
        )

    answer = {"argument": " Look at CO2. ", "category": "REJECT"}
    raw = turn('{"argument": " Look at CO2. ", "category": "REJECT"}', answer, "ok")
    ok = reduce_to_category(raw)
    assert ok.value == "REJECT" and ok.meta == {"argument": " Look at CO2. "}
    assert raw.value == answer and raw.meta == {}  # a new event; the filled one is unchanged
    assert shown_turn(ok) == "Look at CO2.\n\nCategory: REJECT"
    # an unreadable answer keeps value None and is shown exactly as the model wrote it
    bad = reduce_to_category(turn("I think so, MAYBE", None, "parse_failure"))
    assert bad.value is None and bad.meta == {}
    assert shown_turn(bad) == "I think so, MAYBE"


def invoke(tmp_path: Path, experiment: dict, *args: str) -> tuple[int, str]:
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    result = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "r"), *args])
    return result.exit_code, result.output


def small(factors: dict, **settings: object) -> dict:
    base = {"discussant_model": MODELS[0], "opponent_model": MODELS[1], "rounds": 2}
    return {"name": "s", "paradigm": "dyad", "factors": factors, "settings": {**base, **settings}}


@pytest.mark.parametrize(
    ("factors", "settings", "named"),
    [
        ({"stance": ["sideways"]}, {}, "stance"),
        ({"style": ["sneaky"]}, {}, "style"),
        ({"batch": ["a"]}, {}, "batch"),  # a factor the dyad does not read is not ignored
        ({"topics": [[]]}, {}, "topics"),
        ({"rounds": [0]}, {}, "rounds"),
        ({}, {"topics": [{"id": "t", "first": "a", "opposite": "b"}] * 2}, "topics"),
    ],
)
def test_bad_settings_are_one_clear_error(
    tmp_path: Path, factors: dict, settings: dict, named: str
) -> None:
    code, output = invoke(tmp_path, small(factors, **settings), "--dry-run")
    assert code == 2, output
    assert named in output and "Traceback" not in output


def test_a_factor_named_like_a_setting_overrides_it(tmp_path: Path) -> None:
    code, output = invoke(tmp_path, small({"rounds": [1, 3]}), "--dry-run")
    assert code == 0, output
    # T = 1: 4 + 3 = 7 calls; T = 3: 4 * 3 + 3 = 15 calls
    assert "estimated calls: 22" in output
    code, output = invoke(tmp_path, small({"rounds": [1, 3]}))
    assert code == 0, output
    tables = load_tables(tmp_path / "r", None)
    per_conversation = tables.events.groupby("conversation_id").size()
    assert sorted(per_conversation) == [7, 15] and len(captured) == 22
    ratings = tables.events[tables.events["kind"] == "rating"]
    assert sorted(ratings.groupby("conversation_id")["round"].max()) == [1, 3]


def test_metrics_of_a_run_with_levels_fixed_in_settings(tmp_path: Path) -> None:
    # wording and style are settings, not factors: the conversations table has no such column
    run = run_one(tmp_path)
    tables = load_tables(run, None)
    assert "wording" not in tables.conversations.columns
    result = CliRunner().invoke(app, ["metrics", str(run), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["pairings"] == [f"{MODELS[0]} vs {MODELS[1]}"]
    assert figures["shifts"]["overall"][0]["shift_opponent"]["n"] == 1
    # the cell table has the levels of the declared factors (not of the fixed ones), then the
    # pairing
    (cell,) = figures["shifts"]["by_cell"]
    assert list(cell)[:4] == ["discussant_model", "opponent_model", "stance", "pairing"]
    meta = json.loads(tables.conversations.iloc[0]["meta"])
    assert meta["levels"] == {
        "discussant_model": MODELS[0],
        "opponent_model": MODELS[1],
        "stance": "human",
        "style": "plain",
        "wording": "first",
    }


def test_rating_at_checkpoint_r_sees_the_record_through_round_r(tmp_path: Path) -> None:
    run_one(tmp_path, rounds=2)
    ratings = [r for r in captured if isinstance(r.constraint, IntRange)]
    seen = sorted(r.messages[-1].content.count("\n\nCategory: ") for r in ratings)
    # checkpoint 0 (both roles): nothing; checkpoint 1: 2 turns; checkpoint 2: 4 turns
    assert seen == [0, 0, 2, 2, 4, 4]
    before = [r for r in ratings if "Conversation so far" not in r.messages[-1].content]
    assert len(before) == 2  # the pre-ratings come before the opening
    assert all("Opening by" in r.messages[-1].content for r in ratings if r not in before)


def test_same_seed_same_run(tmp_path: Path) -> None:
    columns = ["conversation_id", "seq", "kind", "round", "agent", "text", "value", "status"]
    first = load_tables(run_one(tmp_path / "a"), None).events[columns]
    second = load_tables(run_one(tmp_path / "b"), None).events[columns]
    assert first.sort_values("seq").equals(second.sort_values("seq"))
