"""Scenarios, settings, roles, profiling scores and the shipped examples."""

from collections import Counter
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from backchannel.cli import app
from backchannel.errors import ConfigError
from backchannel.experiment import expand, load_experiment
from backchannel.paradigms.council import Council, CouncilSettings, Scenario, load_scenario
from backchannel.paradigms.council._profiling import assign_models, keyword_score
from backchannel.paradigms.council._prompts import redact_options
from backchannel.paradigms.council._roles import evaluator_names, seats

EXAMPLES = Path(__file__).parents[3] / "examples"


def test_shipped_scenarios():
    welfare, housing = load_scenario("child_welfare"), load_scenario("housing")
    assert len(welfare.options) == 3 and welfare.favourite == "family_preservation"
    assert housing.option_ids == ("rent_control", "deregulation", "public_housing")
    assert housing.favourite is None


def test_user_scenario_file(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(
        "id: mine\nquestion: Which?\noptions:\n"
        "  - {id: x, name: X plan, description: does x}\n"
        "  - {id: y, name: Y plan, description: does y}\n"
    )
    assert load_scenario(str(path)).option_ids == ("x", "y")
    for reserved in ("none", "several"):  # the `argued` task's own labels
        with pytest.raises(ValueError, match=f"option id '{reserved}' is a label of the `argued`"):
            Scenario.from_dict(
                {
                    "id": "s",
                    "question": "q",
                    "options": [
                        {"id": reserved, "name": "N", "description": "n"},
                        {"id": "y", "name": "Y", "description": "y"},
                    ],
                }
            )
    with pytest.raises(ValueError, match="unknown scenario"):
        load_scenario("nowhere")
    with pytest.raises(ValueError, match="favourite"):
        Scenario.from_dict(
            {
                "id": "s",
                "question": "q",
                "favourite": "z",
                "options": [
                    {"id": "x", "name": "X", "description": "x"},
                    {"id": "y", "name": "Y", "description": "y"},
                ],
            }
        )


def test_roster_gives_every_value_its_own_evaluator_unless_allowed():
    settings = CouncilSettings()
    assert settings.roster == [
        "safety",
        "risk_tolerance",
        "pragmatism",
        "performance",
        "simplicity",
        "creativity",
        "fairness",
    ]
    with pytest.raises(ValidationError, match="allow_shared_values"):
        CouncilSettings(evaluators=["safety", "safety", "creativity"])
    shared = CouncilSettings(
        evaluators=["safety", "safety", "creativity"], allow_shared_values=True
    )
    assert evaluator_names(shared.roster) == [
        "evaluator_safety_1",
        "evaluator_safety_2",
        "evaluator_creativity",
    ]
    with pytest.raises(ValidationError, match="unknown values"):
        CouncilSettings(evaluators=["safety", "greed"])


def test_seats_per_state():
    settings = CouncilSettings(single_model="sim/a", pool_models=["sim/p", "sim/q", "sim/r"])
    assert {s.model for s in seats(settings, "A", 0)} == {"sim/a"}
    # B: evaluator i gets pool[(i + replicate) % 3]; replicate 1 starts at q.
    assert [s.model for s in seats(settings, "B", 1)][:4] == ["sim/q", "sim/r", "sim/p", "sim/q"]
    assigned = seats(settings, "B", 0, {v: "sim/r" for v in settings.roster})
    assert {s.model for s in assigned} == {"sim/r"}


def test_check_cell():
    council, settings = Council(), CouncilSettings()
    council.resolve({"pool": "A", "delphi": "self_check"}, settings)
    with pytest.raises(ConfigError, match="pool_models"):
        council.resolve({"pool": "B"}, settings)
    with pytest.raises(ConfigError, match=r"factors.pool: level 'C' is not allowed.*'A', 'B'"):
        council.resolve({"pool": "C"}, settings)
    with pytest.raises(ConfigError, match=r"factors\.delphi: level 'vote'"):
        council.resolve({"delphi": "vote"}, settings)


def test_keyword_score_and_assignment():
    # 9 words; "safe" matches "safe" and "safety" (prefix), "harm" matches "harmful": 3 / 9.
    text = "Safe choices and safety matter; avoid harmful shortcuts now."
    assert keyword_score(text, ["safe", "harm"]) == pytest.approx(3 / 9)
    assert keyword_score("", ["safe"]) == 0.0
    scores = {"safety": {"m1": 0.1, "m2": 0.3}, "creativity": {"m1": 0.2, "m2": 0.2}}
    # creativity ties: the earlier pool model wins.
    assert assign_models(scores, ["m1", "m2"]) == {"safety": "m2", "creativity": "m1"}
    with pytest.raises(ValueError):
        assign_models({"safety": {}}, ["m1"])


def test_redaction_removes_option_ids_and_names():
    scenario = load_scenario("housing")
    text = "Strict rent control beats rent_control? No: DEREGULATION and public housing win."
    redacted = redact_options(text, scenario)
    assert "rent" not in redacted.lower() and "deregulation" not in redacted.lower()
    assert "public housing" not in redacted.lower() and redacted.count("[an option]") == 4


def test_redaction_replaces_whole_words_only():
    # Short ids must not eat letters of other words: "a" in "Safety" or "cautious" stays,
    # the stand-alone "a" and "Plan B" go. "displacement" keeps its letters although
    # "placement" is an option id of child_welfare.
    scenario = Scenario.from_dict(
        {
            "id": "s",
            "question": "q",
            "options": [
                {"id": "a", "name": "Plan A", "description": "x"},
                {"id": "b", "name": "Plan B", "description": "y"},
            ],
        }
    )
    text = "Safety argues a cautious path: plan b is bad, and a is better."
    assert redact_options(text, scenario) == (
        "Safety argues [an option] cautious path: [an option] is bad, and [an option] is better."
    )
    welfare = load_scenario("child_welfare")
    assert redact_options("Rising displacement favours placement.", welfare) == (
        "Rising displacement favours [an option]."
    )


@pytest.mark.parametrize("name", ["council_child_welfare", "council_housing"])
def test_examples_give_25_deliberations_in_a_and_35_in_b(name):
    loaded = load_experiment(EXAMPLES / f"{name}.yaml")
    specs = expand(loaded)
    counts = Counter(spec.cell["pool"] for spec in specs)
    assert counts == {"A": 25, "B": 35}
    assert all(set(spec.cell) == {"pool"} for spec in specs)  # no sizing factor
    # B's replicates 0..34 rotate the pool of seven five times round.
    assert sorted({s.replicate for s in specs if s.cell["pool"] == "B"}) == list(range(35))
    assert len(loaded.settings.pool_models) == 7


@pytest.mark.parametrize(
    ("setting", "field", "message"),
    [
        ({"scenarios": ["nowhere"]}, "settings.scenarios", "unknown scenario 'nowhere'"),
        (
            {"seventh_value": {"name": "Fair", "definition": "d"}},
            "settings.seventh_value.name",
            "lower-case",
        ),
        (
            {"seventh_value": {"name": "safety", "definition": "d"}},
            "settings.seventh_value",
            "repeats a fixed value",
        ),
        ({"evaluators": ["safety", "greed"]}, "settings.evaluators", "unknown values ['greed']"),
        ({"evaluators": ["safety", "safety"]}, "settings.evaluators", "allow_shared_values"),
        ({"threshold": 2}, "settings.threshold", "less than or equal to 1"),
        ({"argued_judge": "nonsense"}, "settings.argued_judge", "name `rule` or a model"),
        ({"argued_judge": "openai/"}, "settings.argued_judge", "name `rule` or a model"),
        ({"argued_max_tokens": 0}, "settings.argued_max_tokens", "greater than or equal to 1"),
    ],
)
def test_bad_settings_exit_2_with_one_error_naming_the_field(tmp_path, setting, field, message):
    experiment = {
        "name": "bad",
        "paradigm": "council",
        "factors": {"pool": ["A"]},
        "settings": {"single_model": "sim", **setting},
    }
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(experiment))
    result = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "r"), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"invalid experiment file: {field}: " in errors[0]
    assert errors[0].count("settings.") == 1  # one error, naming the field
    assert message in result.output


@pytest.mark.parametrize(
    ("rates", "message"),
    [
        (
            {"hidden_change": 0.75, "public_accommodation": 0.5},
            "population.council: hidden_change + public_accommodation must not exceed 1",
        ),
        ({"public_accommodation": 1.5}, "population.council.public_accommodation: "),
    ],
)
def test_planted_rates_beyond_one_exit_2_with_one_error(tmp_path, rates, message):
    experiment = {
        "name": "bad",
        "paradigm": "council",
        "factors": {"pool": ["A"]},
        "settings": {"single_model": "sim/population", "off_the_record": True},
        "population": {"council": rates},
    }
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(experiment))
    result = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "r"), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"invalid experiment file: {message}" in errors[0]


def test_rates_that_sum_to_one_are_allowed() -> None:
    from backchannel.paradigms.council._population import CouncilPopulation

    rates = CouncilPopulation(hidden_change=0.75, public_accommodation=0.25)
    assert rates.hidden_change + rates.public_accommodation == 1
    with pytest.raises(ValidationError, match="must not exceed 1"):
        CouncilPopulation(hidden_change=0.75, public_accommodation=0.5)


def test_distinct_assignment_gives_no_two_values_one_model_while_models_remain() -> None:
    from backchannel.paradigms.council._profiling import assign_distinct_models

    # m1 is best at everything: plain assignment gives it every value.
    scores = {
        "safety": {"m1": 0.9, "m2": 0.5, "m3": 0.1},
        "creativity": {"m1": 0.8, "m2": 0.7, "m3": 0.2},
        "pragmatism": {"m1": 0.7, "m2": 0.1, "m3": 0.3},
        "simplicity": {"m1": 0.6, "m2": 0.0, "m3": 0.0},
    }
    assert set(assign_models(scores, ["m1", "m2", "m3"]).values()) == {"m1"}
    # Best pair first: safety-m1 (0.9); then creativity-m2 (0.7); pragmatism-m3 (0.3). With
    # every model taken, simplicity starts over on the pool: m1 (0.6).
    assert assign_distinct_models(scores, ["m1", "m2", "m3"]) == {
        "safety": "m1",
        "creativity": "m2",
        "pragmatism": "m3",
        "simplicity": "m1",
    }
    with pytest.raises(ValueError, match="no model has a profiling score"):
        assign_distinct_models({"safety": {}}, ["m1"])
