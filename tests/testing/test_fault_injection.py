"""A run against a server that fails a third of its requests in eleven ways (429 with and without
Retry-After, 500, 503, dropped connections, answers slower than the timeout, bodies trickled in
past the timeout, HTML bodies, empty `choices`, truncated JSON, bodies that are not UTF-8) ends
complete, with the same exported events as a clean run; and unusable bodies past the retries are
failed calls that `status` counts and names, which a rerun retries."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from conftest import ThreadedServer, WriteExperiment, discussion_experiment, invoke

from backchannel.analysis import RunTables
from backchannel.testing import mixed_script
from backchannel.testing._faults import NOT_UTF8, parse_script

FAULT_KINDS = [
    ("status", 429, 0.05),
    ("status", 429),
    ("status", 500),
    ("status", 503),
    ("disconnect",),
    ("delay", 1.5),  # past the endpoint's 0.4 s timeout
    ("html",),
    ("empty_choices",),
    ("truncated",),
    ("not_utf8",),
    ("trickle", 1.5),  # each piece in time, the whole body past the 0.4 s timeout
]
RETRY = {"base_delay_s": 0.01, "max_delay_s": 0.05, "max_wait_s": 120.0}


def experiment(base_url: str, timeout_s: float = 0.4) -> dict[str, Any]:
    data = discussion_experiment(
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"base_url": base_url, "api_key": "sk-test", "timeout_s": timeout_s}],
        retry=RETRY,
    )
    data["settings"]["questions"].append({"id": "q3", "question": "What is the boiling point?"})
    return data


def balanced_script(blocks: int, seed: int) -> list[Any]:
    """Blocks of 33 requests, each block holding every fault kind once among 22 normal answers
    (exactly a third), shuffled; then a seeded mix at the same rate for any further requests."""
    rng = random.Random(seed)
    script: list[Any] = []
    for _ in range(blocks):
        block = [*parse_script(FAULT_KINDS), *([None] * 2 * len(FAULT_KINDS))]
        rng.shuffle(block)
        script += block
    return script + mixed_script(200, 1 / 3, FAULT_KINDS, seed=seed)


def run_and_export(
    write: WriteExperiment, tmp_path: Path, name: str, url: str, timeout_s: float = 0.4
) -> pd.DataFrame:
    path = write(experiment(url, timeout_s), name=f"{name}.yaml")
    result = invoke("run", path, "-o", tmp_path / name, "--concurrency", "4")
    assert result.exit_code == 0, result.stderr
    assert "stored conversations: 3 done, 0 incomplete, 0 failed" in result.stdout
    exported = invoke("export", tmp_path / name, "-o", tmp_path / f"{name}-tables")
    assert exported.exit_code == 0, exported.stderr
    events = RunTables.from_directory(tmp_path / f"{name}-tables").events
    return events.drop(columns=["latency_s"])


def without_retries(events: pd.DataFrame) -> pd.DataFrame:
    """The events with the transport retries taken out of their meta (a fact of the transport,
    like latency)."""

    def drop(meta: str) -> str:
        data = json.loads(meta)
        data.pop("retries", None)
        return json.dumps(data, sort_keys=True)

    return events.assign(meta=events["meta"].map(drop))


def test_a_third_of_requests_failing_still_yields_the_clean_runs_events(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    script = balanced_script(blocks=12, seed=17)
    faulty = threaded_server(faults=script)
    clean = threaded_server()
    faulted_events = run_and_export(write_experiment, tmp_path, "faulty", faulty.base_url)
    # The clean run waits as long as a loaded machine needs: none of its calls may be retried.
    clean_events = run_and_export(write_experiment, tmp_path, "clean", clean.base_url, 30.0)

    # Faults were really injected, of every kind, and retried.
    consumed = len(faulty.server.requests)
    injected = script[:consumed]
    assert sum(f is not None for f in injected) >= 10
    assert {type(f).__name__ for f in injected if f is not None} >= {
        "StatusFault",
        "DisconnectFault",
        "DelayFault",
        "BodyFault",
        "TrickleFault",
    }
    assert any(getattr(f, "body", None) == NOT_UTF8 for f in injected)
    assert consumed > len(clean.server.requests)
    status = invoke("status", tmp_path / "faulty")
    retries = int(status.stdout.split("retries ")[1].split()[0])
    assert retries >= sum(f is not None for f in injected) - 5  # each fault costs one retry

    # Each event records its call's retries, and they add up to the run's count ...
    def recorded(events: pd.DataFrame) -> pd.Series:
        called = events[events["model"] != ""]  # events that made a model call
        return called["meta"].map(lambda m: json.loads(m)["retries"])

    assert int(recorded(faulted_events).sum()) == retries
    assert (recorded(clean_events) == 0).all()
    # ... and otherwise the data is the clean run's, event for event.
    pd.testing.assert_frame_equal(without_retries(faulted_events), without_retries(clean_events))
    assert (faulted_events["status"] == "ok").all()


def test_unusable_bodies_past_the_retries_are_counted_named_and_retried_by_a_rerun(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    # No retries: every body that is not UTF-8 fails its call. 3 questions x 10 calls = 30.
    script = [("not_utf8",) if i in (3, 11, 25) else None for i in range(30)]
    server = threaded_server(faults=script)
    data = experiment(server.base_url)
    data["retry"] = {"max_retries": 0}
    path = write_experiment(data)
    run = tmp_path / "run"
    first = invoke("run", path, "-o", run, "--concurrency", "1")
    assert first.exit_code == 1
    assert "0 failed" in first.stdout and "incomplete" in first.stdout
    assert "Traceback" not in first.stderr
    status = invoke("status", run)
    assert status.exit_code == 0
    assert "failures 3" in status.stdout
    assert f"{server.base_url}/ answered 200 with a body that is not valid JSON" in (
        status.stderr.replace("\n", " ")
    )
    # The faults are spent: the rerun retries the failed calls and completes.
    again = invoke("run", path, "-o", run, "--concurrency", "1")
    assert again.exit_code == 0, again.stderr
    assert "stored conversations: 3 done, 0 incomplete, 0 failed" in again.stdout
