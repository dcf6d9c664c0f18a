"""The screening question on the simulated population: read from its call information (the
item's true answer), and the same `know` draw as a peer-pressure agent of the same model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from backchannel.backends import PopulationBook
from backchannel.backends._population import SimulatedPopulation
from backchannel.cli._screen import screening_requests
from backchannel.datasets import KNOW, SCREEN, SCREENING_POPULATION, FactItem, knows

BOOK = PopulationBook.of("screening", SCREENING_POPULATION)


def test_a_screening_request_says_what_it_asks(paris: FactItem) -> None:
    (request,) = screening_requests([paris], "sim/population", samples=1, temperature=0.7,
                                    max_tokens=24, seed=0)  # fmt: skip
    call = request.call
    assert call is not None and (call.source, call.prompt, call.item_id) == (
        "screening", SCREEN, "t/1",
    )  # fmt: skip
    assert call.item == {"question": paris.question, "true_answer": "Paris"}


def test_a_model_answers_the_questions_it_knows(paris: FactItem) -> None:
    items = [dataclasses.replace(paris, item_id=f"t/{i}", question=f"Q{i}?") for i in range(60)]
    requests = screening_requests(items, "sim/population#m", samples=2, temperature=0.7,
                                  max_tokens=24, seed=0)  # fmt: skip
    population = SimulatedPopulation(BOOK, None)
    answers = [population.answer(r) for r in requests]
    for index, item in enumerate(items):
        expected = "Paris." if knows("sim/population#m", item.question, KNOW) else "I do not know."
        assert answers[2 * index] == answers[2 * index + 1] == expected  # fixed per question
    known = sum(a == "Paris." for a in answers[::2])
    assert 40 <= known <= 60  # about KNOW = 0.9 of 60


def test_the_screen_command_on_the_population(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from backchannel.cli import app
    from backchannel.datasets import DatasetSource, load_source

    output = tmp_path / "screened.jsonl"
    args = ["screen", "--model", "sim/population", "--dataset", "popqa", "--limit", "20"]
    result = CliRunner().invoke(app, [*args, "-o", str(output)])
    assert result.exit_code == 0, result.output
    kept = [json.loads(line)["question"] for line in output.read_text().splitlines()]
    items = list(load_source(DatasetSource(name="popqa", limit=20)))
    assert kept == [i.question for i in items if knows("sim/population", i.question, KNOW)]
