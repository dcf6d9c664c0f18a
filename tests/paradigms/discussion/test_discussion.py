"""The discussion paradigm on scripted sims: the private channel never leaks, the estimate is
exact, and the metrics follow hand-computed answers."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from conftest import WriteExperiment, discussion_experiment

from backchannel import orchestration
from backchannel.analysis import RunTables
from backchannel.backends import Request, register_sim, unregister_sim
from backchannel.experiment import load_experiment
from backchannel.paradigms.discussion import conversation_figures, discussion_metrics

SIM = "discussion-recorder"
PROBE_MARK = "private question from the organiser"


class Recorder:
    """Unique answers: public turns `TURN-n`, private probe answers `SECRET-n`."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._counter = itertools.count()

    def __call__(self, request: Request) -> str:
        self.requests.append(request)
        kind = "SECRET" if PROBE_MARK in request.messages[-1].content else "TURN"
        return f"{kind}-{next(self._counter):04d}"


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    register_sim(SIM, rec)
    yield rec
    unregister_sim(SIM)


def run(path: Path, directory: Path) -> RunTables:
    loaded = load_experiment(path)
    plan = orchestration.plan(loaded)
    store = orchestration.open_run_directory(directory, loaded)
    client, cache = orchestration.make_client(plan, directory, concurrency=2)

    async def main() -> None:
        try:
            await orchestration.execute(plan, store, client=client, max_active=4)
        finally:
            await client.aclose()

    asyncio.run(main())
    cache.close()
    tables = store.tables()
    store.close()
    return tables


def test_no_probe_answer_ever_appears_in_a_later_prompt(
    recorder: Recorder, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    data = discussion_experiment(factors={"model": [f"sim/{SIM}"]})
    data["settings"].update(agents=3, rounds=3, memory_rounds=10)
    tables = run(write_experiment(data), tmp_path / "run")
    probes = tables.events[tables.events["kind"] == "probe"]
    turns = tables.events[tables.events["name"] == "turn"]
    secrets = set(probes["text"])
    # 2 questions x 3 agents x 4 checkpoints, every answer unique and stored as private.
    assert len(secrets) == len(probes) == 24
    assert all(s.startswith("SECRET-") for s in secrets)
    assert set(probes["channel"]) == {"private"} and set(turns["channel"]) == {"public"}
    prompts = ["\n".join(m.content for m in r.messages) for r in recorder.requests]
    assert len(prompts) == 2 * (3 * 3 + 3 * 4)
    for prompt in prompts:
        assert "SECRET-" not in prompt
    # The check can fail: public turns do reach later prompts.
    assert any(text in prompt for text in turns["text"] for prompt in prompts)


def test_estimate_equals_calls_made(
    recorder: Recorder, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    data = discussion_experiment(factors={"model": [f"sim/{SIM}"], "agents": [1, 4]})
    data["settings"]["rounds"] = 2
    path = write_experiment(data)
    estimate = orchestration.plan(load_experiment(path)).estimate()
    run(path, tmp_path / "run")
    assert estimate["calls"] == len(recorder.requests)
    # 2 questions x [(1*2 + 1*3) + (4*2 + 4*3)] = 2 x (5 + 20) = 50.
    assert estimate["calls"] == 50


def test_same_seed_same_run(write_experiment: WriteExperiment, tmp_path: Path) -> None:
    path = write_experiment()
    first = run(path, tmp_path / "a")
    second = run(path, tmp_path / "b")
    columns = ["conversation_id", "seq", "kind", "round", "turn", "agent", "text", "status"]
    pd.testing.assert_frame_equal(first.events[columns], second.events[columns])


def hand_tables() -> RunTables:
    """Two conversations, two agents, checkpoints 0 and 1 (texts normalised before comparing).

    c1: A "Paris" -> "paris!" (same), B "Lyon" -> "Paris" (changed): change 1/2; final
        answers {paris, paris}: agreement 2/2.
    c2: A "Rome" -> "Milan" (changed), B "Rome" -> parse failure at checkpoint 1: only A
        is compared, change 1/1; final answers {milan}: agreement 1/1; one failed probe.
    Means over conversations: change (0.5 + 1) / 2 = 0.75, agreement (1 + 1) / 2 = 1.
    """
    rows = [
        ("c1", 0, "A", "Paris", "ok"),
        ("c1", 0, "B", "Lyon", "ok"),
        ("c1", 1, "A", "paris!", "ok"),
        ("c1", 1, "B", "Paris", "ok"),
        ("c2", 0, "A", "Rome", "ok"),
        ("c2", 0, "B", "Rome", "ok"),
        ("c2", 1, "A", "Milan", "ok"),
        ("c2", 1, "B", "", "error"),
    ]
    events = pd.DataFrame(
        [
            {
                "conversation_id": c,
                "kind": "probe",
                "name": "answer",
                "round": r,
                "agent": a,
                "text": t,
                "status": s,
            }
            for c, r, a, t, s in rows
        ]
    )
    empty = RunTables.empty()
    return RunTables(events, empty.labels, empty.conversations, {})


def test_metrics_on_hand_built_tables() -> None:
    figures = conversation_figures(hand_tables()).set_index("conversation_id")
    assert figures.loc["c1", "answer_change_rate"] == 0.5
    assert figures.loc["c2", "answer_change_rate"] == 1.0
    assert list(figures["final_agreement"]) == [1.0, 1.0]
    assert list(figures["failed_probes"]) == [0, 1]
    metrics = discussion_metrics(hand_tables())
    (cell,) = metrics.by_cell  # no factors: the run is one cell
    assert cell.cell == {} and cell.conversations == 2
    assert cell.answer_change_rate.estimate == 0.75
    assert cell.final_agreement.estimate == 1.0
    assert metrics.failed_probes == 1 and metrics.conversations == 2
    json.dumps(metrics.as_json())  # JSON-able
