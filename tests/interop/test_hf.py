"""`export --format hf`: a DatasetDict on disk with the Parquet export's rows, and a card that
names the design, the models, the items' license and how to cite the run.

Hugging Face's `datasets` cannot be imported in this process: the test package `datasets`
(tests/datasets, on sys.path) has its name. So the export and `datasets.load_from_disk` run in
one fresh interpreter, outside tests/, for all runs at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import invoke
from huggingface_hub import DatasetCard

import backchannel as bc

EXPORT_AND_LOAD = """
import contextlib, io, json, pickle, sys

import datasets

from backchannel._entry import main

jobs, target = json.loads(sys.argv[1]), sys.argv[2]
found = {}
for name, run, out in jobs:
    sys.argv = ["backchannel", "export", run, "--format", "hf", "-o", out]
    stdout, stderr, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            main()
        except SystemExit as stop:
            code = stop.code
    loaded = datasets.load_from_disk(out)
    found[name] = {
        "code": code,
        "stdout": stdout.getvalue(),
        "stderr": stderr.getvalue(),
        "dict": isinstance(loaded, datasets.DatasetDict),
        "splits": {split: data.data.table for split, data in loaded.items()},
    }
with open(target, "wb") as handle:
    pickle.dump(found, handle)
"""
RUNS = ("quickstart_run", "testimony_run", "hand_run")


@pytest.fixture(scope="module")
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every run exported as `hf` (and as Parquet), in one fresh interpreter."""
    folder = tmp_path_factory.mktemp("hf")
    jobs = []
    for name in RUNS:
        run: Path = request.getfixturevalue(name)
        jobs.append((name, str(run), str(folder / name)))
        assert invoke("export", run, "-o", folder / f"{name}.parquet").exit_code == 0
    target = folder / "loaded.pickle"
    done = subprocess.run(
        [sys.executable, "-c", EXPORT_AND_LOAD, json.dumps(jobs), str(target)],
        capture_output=True,
        text=True,
        cwd=folder,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return folder


def loaded(folder: Path, name: str) -> dict[str, Any]:
    found: dict[str, dict[str, Any]] = pd.read_pickle(folder / "loaded.pickle")
    assert found[name]["code"] == 0, found[name]["stderr"]
    assert found[name]["dict"]  # load_from_disk gives a DatasetDict
    return found[name]


def card(folder: Path, name: str) -> DatasetCard:
    return DatasetCard.load(folder / name / "README.md")


@pytest.mark.parametrize("name", RUNS)
def test_the_dataset_has_the_rows_of_the_parquet_export(name: str, exported: Path) -> None:
    splits: dict[str, pa.Table] = loaded(exported, name)["splits"]
    parquet = exported / f"{name}.parquet"
    files = sorted(parquet.glob("*.parquet"))
    assert sorted(splits) == sorted(p.stem for p in files)
    for path in files:
        expected = pq.read_table(path)
        got = splits[path.stem]
        plain = expected.replace_schema_metadata(None)  # without the pandas dtypes it records
        pd.testing.assert_frame_equal(got.to_pandas(), plain.to_pandas())
        assert got.equals(expected, check_metadata=False), path.stem  # same types and values
    manifest = json.loads((exported / name / "manifest.json").read_text())
    assert manifest == json.loads((parquet / "manifest.json").read_text())


def test_testimony_keeps_its_own_table_even_when_empty(exported: Path, testimony_run: Path) -> None:
    splits: dict[str, pa.Table] = loaded(exported, "testimony_run")["splits"]
    run = bc.open_run(testimony_run)
    citations = run.paradigm.tables(run.tables)["citations"]
    assert splits["citations"].column_names == list(citations.columns)
    assert splits["citations"].num_rows == len(citations)
    assert splits["events"].num_rows == len(run.events)


def test_the_card_names_design_models_license_and_citation(
    exported: Path, quickstart_run: Path
) -> None:
    found = card(exported, "quickstart_run")
    assert found.data.license == "mit"  # the shipped CounterFact subset (ROME, MIT)
    assert "peer_pressure" in found.data.tags
    text = found.text
    manifest = bc.open_run(quickstart_run).manifest
    assert "| k | 0, 1 |" in text and "| model | sim/population |" in text
    assert f"experiment seed {manifest['seed']}" in text
    assert "| sim/population | 54 |" in text  # calls per model
    assert "Original dataset: CounterFact" in text and "License: MIT" in text
    assert manifest["run_id"] in text and f"backchannel {bc.__version__}" in text
    study = bc.open_run(quickstart_run).paradigm.study()
    assert study is not None and " ".join(study.citation.split()) in text
    assert "Simulated run" in text
    assert "push_to_hub" in text  # publishing is the user's own step
    assert "| events | 58 |" in text


def test_items_the_package_does_not_document_make_the_license_other(exported: Path) -> None:
    hand = card(exported, "hand_run")
    assert hand.data.license == "other"
    assert "2 item(s) (`q1`, `q2`) come from no dataset the package documents" in hand.text
    testimony = card(exported, "testimony_run")
    assert testimony.data.license == "apache-2.0"  # Hi-ToM, shipped in the paradigm's folder
    assert "Hi-ToM" in testimony.text


def test_the_export_leaves_no_scratch_files_and_no_progress_bars(exported: Path) -> None:
    found = loaded(exported, "hand_run")
    # the only words on stderr: the run is not complete (said as for every export)
    assert found["stderr"].startswith("note: This run is not complete (1 incomplete, 1 failed")
    assert len(found["stderr"].splitlines()) == 1
    folder = exported / "hand_run"
    assert found["stdout"].split() == [str(folder / n) for n in (
        "README.md", "conversations", "dataset_dict.json", "events", "labels", "manifest.json",
        "prompts",
    )]  # fmt: skip
    assert sorted(p.name for p in folder.iterdir()) == [
        ".backchannel-export.json",
        "README.md",
        "conversations",
        "dataset_dict.json",
        "events",
        "labels",
        "manifest.json",
        "prompts",
    ]
    assert not [p for p in exported.iterdir() if p.name.startswith(".")]  # no staging left


def test_the_items_license_follows_a_file_the_experiment_gave(
    quickstart_run: Path, tmp_path: Path
) -> None:
    # the same run as if its CounterFact items had come from the user's own file
    from backchannel.interop._provenance import provenance

    tables = bc.open_run(quickstart_run).tables
    assert provenance(tables, None).license == "mit"
    resolved = tables.manifest["config_resolved"]
    resolved["settings"]["datasets"][0]["path"] = str(tmp_path / "mine.json")
    found = provenance(tables, None)
    assert found.sources == () and found.license == "other"
    assert sorted(found.undocumented) == sorted(set(tables.conversations["item_id"]))
