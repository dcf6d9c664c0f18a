"""`export --format hf`: a DatasetDict on disk with the Parquet export's rows, and a card that
names the design, the models, the items' license and how to cite the run.

Hugging Face's `datasets` cannot be imported in this process: the test package `datasets`
(tests/datasets, on sys.path) has its name. So the export and `datasets.load_from_disk` run in
fresh interpreters, outside tests/.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from huggingface_hub import DatasetCard

import backchannel as bc

BIN = Path(sys.executable).parent
LOAD = """
import pickle, sys
import datasets

loaded = datasets.load_from_disk(sys.argv[1])
assert isinstance(loaded, datasets.DatasetDict), type(loaded)
frames = {name: split.data.table for name, split in loaded.items()}
with open(sys.argv[2], "wb") as out:
    pickle.dump(frames, out)
"""


def backchannel(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [str(BIN / "backchannel"), *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, check=False)


def export(run: Path, out: Path, fmt: str) -> Path:
    done = backchannel("export", run, "--format", fmt, "-o", out, cwd=out.parent)
    assert done.returncode == 0, done.stderr
    return out


def load_from_disk(folder: Path) -> dict[str, pa.Table]:
    """Each split of `datasets.load_from_disk(folder)`, as its Arrow table."""
    target = folder.parent / f"{folder.name}.pickle"
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(folder), str(target)],
        capture_output=True,
        text=True,
        cwd=folder.parent,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    frames: dict[str, pa.Table] = pd.read_pickle(target)
    target.unlink()
    return frames


@pytest.mark.parametrize("example", ["quickstart_run", "testimony_run", "hand_run"])
def test_the_dataset_has_the_rows_of_the_parquet_export(
    example: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    run: Path = request.getfixturevalue(example)
    parquet = export(run, tmp_path / "parquet", "parquet")
    loaded = load_from_disk(export(run, tmp_path / "hf", "hf"))
    files = sorted(parquet.glob("*.parquet"))
    assert sorted(loaded) == sorted(p.stem for p in files)
    for path in files:
        expected = pq.read_table(path)
        got = loaded[path.stem]
        plain = expected.replace_schema_metadata(None)  # without the pandas dtypes it records
        pd.testing.assert_frame_equal(got.to_pandas(), plain.to_pandas())
        assert got.equals(expected, check_metadata=False), path.stem  # same types and values
    manifest = json.loads((tmp_path / "hf" / "manifest.json").read_text())
    assert manifest == json.loads((parquet / "manifest.json").read_text())


def test_testimony_keeps_its_own_table_even_when_empty(testimony_run: Path, tmp_path: Path) -> None:
    loaded = load_from_disk(export(testimony_run, tmp_path / "hf", "hf"))
    run = bc.open_run(testimony_run)
    assert "citations" in loaded
    citations = run.paradigm.tables(run.tables)["citations"]
    assert loaded["citations"].column_names == list(citations.columns)
    assert loaded["citations"].num_rows == len(citations)
    assert loaded["events"].num_rows == len(run.events)


def test_the_card_names_design_models_license_and_citation(
    quickstart_run: Path, tmp_path: Path
) -> None:
    out = export(quickstart_run, tmp_path / "hf", "hf")
    card = DatasetCard.load(out / "README.md")
    assert card.data.license == "mit"  # the shipped CounterFact subset (ROME, MIT)
    assert "peer_pressure" in card.data.tags
    text = card.text
    manifest = bc.open_run(quickstart_run).manifest
    assert "| k | 0, 1 |" in text and "| model | sim/population |" in text
    assert f"experiment seed {manifest['seed']}" in text
    assert "| sim/population | 156 |" in text  # calls per model
    assert "Original dataset: CounterFact" in text and "License: MIT" in text
    assert manifest["run_id"] in text and f"backchannel {bc.__version__}" in text
    study = bc.open_run(quickstart_run).paradigm.study()
    assert study is not None and " ".join(study.citation.split()) in text
    assert "Simulated run" in text
    assert "push_to_hub" in text  # publishing is the user's own step
    assert "| events | 162 |" in text


def test_items_the_package_does_not_document_make_the_license_other(
    hand_run: Path, testimony_run: Path, tmp_path: Path
) -> None:
    hand = DatasetCard.load(export(hand_run, tmp_path / "hand", "hf") / "README.md")
    assert hand.data.license == "other"
    assert "2 item(s) (`q1`, `q2`) come from no dataset the package documents" in hand.text
    testimony = DatasetCard.load(export(testimony_run, tmp_path / "t", "hf") / "README.md")
    assert testimony.data.license == "apache-2.0"  # Hi-ToM, shipped in the paradigm's folder
    assert "Hi-ToM" in testimony.text


def test_the_export_leaves_no_scratch_files_and_no_progress_bars(
    hand_run: Path, tmp_path: Path
) -> None:
    done = backchannel("export", hand_run, "--format", "hf", "-o", tmp_path / "hf", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # the only words on stderr: the run is not complete (said as for every export)
    assert done.stderr.startswith("note: This run is not complete (1 incomplete, 1 failed")
    assert len(done.stderr.splitlines()) == 1
    assert done.stdout.split() == [str(tmp_path / "hf" / n) for n in (
        "README.md", "conversations", "dataset_dict.json", "events", "labels", "manifest.json"
    )]  # fmt: skip
    names = sorted(p.name for p in (tmp_path / "hf").iterdir())
    assert names == [
        ".backchannel-export.json",
        "README.md",
        "conversations",
        "dataset_dict.json",
        "events",
        "labels",
        "manifest.json",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hf"]
