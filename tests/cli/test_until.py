"""`backchannel run --until`: bad targets refused before anything is written, a run that stops on
its target or at its ceiling, the looks in `status`, the file's `stopping` section, and a
stopped run that resumes to nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import WriteExperiment, discussion_experiment, invoke

from backchannel.store import RunStore


def peer_pressure(**overrides: Any) -> dict[str, Any]:
    """Peer pressure on sim/population: k in {0, 1}, 2 questions, 6 replicates at most."""
    data: dict[str, Any] = {
        "name": "until",
        "paradigm": "peer_pressure",
        "seed": 5,
        "replicates": 6,
        "factors": {"model": ["sim/population"], "k": [0, 1]},
        "settings": {
            "datasets": [{"name": "counterfact", "limit": 2}],
            "n_agents": 3,
            "rounds": 1,
            "judge": {"kind": "rule"},
        },
        "stopping": {"batch": 2, "first": 2},
        "population": {"peer_pressure": {"adopt": 0.5, "peer_weight": 0.0}},
    }
    data.update(overrides)
    return data


def stopping(run: Path) -> dict[str, Any]:
    store = RunStore(run, readonly=True)
    try:
        record = store.manifest()["stopping"]
        assert isinstance(record, dict)
        return record
    finally:
        store.close()


@pytest.mark.parametrize(
    ("until", "says"),
    [
        (
            "fpi.halfwidth<=0.05",
            "--until names fpi, which peer_pressure does not declare; its "
            "headline contrasts are: fpi_gap",
        ),
        ("fpi_gap.p<=0.05", "stops on p; a run stops on precision only"),
        ("fpi_gap.halfwidth=0.05", "cannot read 'fpi_gap.halfwidth=0.05'"),
        ("fpi_gap.halfwidth<=0.05 or fpi_gap.halfwidth<=1", "cannot read"),
        ("fpi_gap.halfwidth<=-1", "cannot read"),
    ],
)
def test_a_bad_target_is_one_line_exit_2_and_nothing_written(
    write_experiment: WriteExperiment, tmp_path: Path, until: str, says: str
) -> None:
    result = invoke(
        "run", write_experiment(peer_pressure()), "-o", tmp_path / "run", "--until", until
    )
    assert result.exit_code == 2
    assert says in result.stderr
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) <= 2
    assert "Traceback" not in result.output + result.stderr
    assert not (tmp_path / "run").exists()


def test_a_paradigm_without_headline_contrasts_and_until_with_limit_are_refused(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    result = invoke(
        "run",
        write_experiment(discussion_experiment()),
        "-o",
        tmp_path / "a",
        "--until",
        "x.halfwidth<=0.1",
    )
    assert result.exit_code == 2 and "its headline contrasts are: none" in result.stderr
    limited = invoke(
        "run",
        write_experiment(peer_pressure()),
        "-o",
        tmp_path / "b",
        "--limit",
        "2",
        "--until",
        "fpi_gap.halfwidth<=0.1",
    )
    assert limited.exit_code == 2 and "--until and --limit" in limited.stderr
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    in_file = peer_pressure(stopping={"until": "fpi_gap.estimate<=0.2"})
    refused = invoke("run", write_experiment(in_file), "-o", tmp_path / "c")
    assert refused.exit_code == 2 and "stops on estimate" in refused.stderr


def test_the_dry_run_prints_the_batches(write_experiment: WriteExperiment, tmp_path: Path) -> None:
    result = invoke(
        "run",
        write_experiment(peer_pressure()),
        "-o",
        tmp_path / "run",
        "--dry-run",
        "--until",
        "fpi_gap.halfwidth<=0.1",
    )
    assert result.exit_code == 0, result.stderr
    assert "batches end at replicates 2, 4, 6 per cell and item" in " ".join(result.stdout.split())
    assert not (tmp_path / "run").exists()


def test_a_run_stops_at_its_target_and_status_lists_the_looks(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    path = write_experiment(peer_pressure())
    # any interval is narrower than 10: the first look (2 replicates x 2 cells x 2 items) stops
    result = invoke("run", path, "-o", run, "--until", "fpi_gap.halfwidth<=10")
    assert result.exit_code == 0, result.stderr
    assert "stopped after 2 replicates (8 conversations): fpi_gap.halfwidth<=10 holds" in (
        " ".join(result.stdout.split())
    )
    record = stopping(run)
    assert record["stopped"] == "target" and len(record["looks"]) == 1
    look = record["looks"][0]
    assert look["conversations"] == 8 and look["contrasts"]["fpi_gap"]["n"] == 4
    # k = 0 has no adversary, so its FPI is 0 and the gap is the k = 1 arm's mean
    assert 0 <= look["contrasts"]["fpi_gap"]["estimate"] <= 1
    status = invoke("status", run)
    assert status.exit_code == 0
    text = " ".join(status.stdout.split())
    assert "stopping: --until 'fpi_gap.halfwidth<=10', batches of 2 replicates (first 2)" in text
    assert "look 1: 2 replicates, 8 conversations" in text
    assert "fpi_gap.halfwidth<=10 holds" in text
    again = invoke("run", path, "-o", run)
    assert again.exit_code == 0
    assert "resuming the run's stopping rule" in again.stderr
    assert "this run is complete" in " ".join(again.stderr.split())
    assert stopping(run) == record


def test_the_files_target_runs_to_the_ceiling_when_it_never_holds(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    data = peer_pressure(stopping={"until": "fpi_gap.halfwidth<1e-9", "batch": 2, "first": 2})
    result = invoke("run", write_experiment(data), "-o", run)
    assert result.exit_code == 0, result.stderr
    record = stopping(run)
    assert [k["replicates"] for k in record["looks"]] == [2, 4, 6]
    assert [k["stop"] for k in record["looks"]] == [None, None, "ceiling"]
    widths = [k["contrasts"]["fpi_gap"]["halfwidth"] for k in record["looks"]]
    assert all(w > 0 for w in widths)
    assert "the design's ceiling was reached" in " ".join(result.stdout.split())
    # the manifest's looks are plain JSON
    json.dumps(record)


def test_a_contrast_in_several_strata_is_as_precise_as_its_widest_one(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    models = ["sim/population#a", "sim/population#b"]
    data = peer_pressure(factors={"model": models, "k": [0, 1]})
    result = invoke("run", write_experiment(data), "-o", run, "--until", "fpi_gap.halfwidth<=10")
    assert result.exit_code == 0, result.stderr
    reading = stopping(run)["looks"][0]["contrasts"]["fpi_gap"]
    strata = reading["strata"]
    assert [s["stratum"] for s in strata] == [{"model": m} for m in models]
    assert reading["halfwidth"] == max(s["halfwidth"] for s in strata)
    assert reading["n"] == min(s["n"] for s in strata) == 4
    assert reading["estimate"] is None  # one estimate per stratum, none for the whole
