"""Every row of a dataset that does not become a conversation is counted and named with its
reason in the run's output, `status` and the manifest; a file with no usable row at all (empty,
blank, every row dropped) is refused naming the file and what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import invoke

GOOD = [
    ("The mother tongue of Danielle Darrieux is", "Danielle Darrieux", "French", "English"),
    ("The capital of Kenya is", "Kenya", "Nairobi", "Mombasa"),
    ("Toko Yasuda plays the", "Toko Yasuda", "guitar", "piano"),
    ("The currency of Japan is the", "Japan", "yen", "euro"),
]
DROPPED = [
    # a number whose false answer is no number, as a hostile or broken file has it
    ("The sum is", "the sum", "-2+3", "javascript:alert(1)"),
    # the false answer is the true one in another case
    ("Nowhere is located in", "Nowhere", "France", "france"),
]


def counterfact(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    records = [
        {"case_id": i, "prompt": p, "subject": s, "ground_truth": t, "target_new": f}
        for i, (p, s, t, f) in enumerate(rows)
    ]
    path.write_text(json.dumps(records))
    return path


def experiment(tmp_path: Path, data: Path, **source: Any) -> Path:
    path = tmp_path / "pp.yaml"
    settings = {
        "model": "sim",
        "n_agents": 2,
        "k": 1,
        "rounds": 1,
        "judge": None,
        "datasets": [{"name": "cf", "path": str(data), "format": "counterfact", **source}],
    }
    path.write_text(
        yaml.safe_dump({"name": "pp", "paradigm": "peer_pressure", "settings": settings})
    )
    return path


def test_dropped_rows_are_named_with_their_reasons_in_output_status_and_manifest(
    tmp_path: Path,
) -> None:
    # rows 0-3 usable; 4 and 5 dropped: 4 of 6 rows become conversations
    data = counterfact(tmp_path / "cf.json", [*GOOD[:2], *DROPPED, *GOOD[2:]])
    path, run = experiment(tmp_path, data), tmp_path / "run"
    reasons = [
        "'cf', counterfact/2: its false answer 'javascript:alert(1)' is not of the true "
        "answer's kind (shape number:words, the true answer's number:3",
        "'cf', counterfact/3: its false answer 'france' shares an alias with the true answer",
    ]

    dry = invoke("run", path, "-o", run, "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert "conversations: 4" in dry.stdout
    assert "note: 2 rows of the data became no conversation" in dry.stderr
    for reason in reasons:
        assert reason in dry.stderr.replace("\n", " ")

    result = invoke("run", path, "-o", run)
    assert result.exit_code == 0, result.stderr
    assert "stored conversations: 4 done" in result.stdout
    assert "rows of the data that became no conversation: 2" in result.stdout
    for reason in reasons:
        assert reason in result.stderr.replace("\n", " ")

    status = invoke("status", run)
    assert status.exit_code == 0
    assert "note: 2 rows of the data became no conversation" in status.stderr
    for reason in reasons:
        assert reason in status.stderr.replace("\n", " ")

    assert invoke("export", run, "-o", tmp_path / "tables").exit_code == 0
    manifest = json.loads((tmp_path / "tables" / "manifest.json").read_text())
    assert [(s["source"], s["item"]) for s in manifest["skipped_items"]] == [
        ("cf", "counterfact/2"),
        ("cf", "counterfact/3"),
    ]
    assert manifest["skipped_items"][1]["reason"].endswith("shares an alias with the true answer")


def test_a_limit_before_the_dropped_rows_drops_nothing_unsaid(tmp_path: Path) -> None:
    data = counterfact(tmp_path / "cf.json", [*GOOD[:2], *DROPPED, *GOOD[2:]])
    for source, conversations, skipped in (({"limit": 2}, 2, 0), ({"limit": 3}, 3, 2)):
        result = invoke(
            "run", experiment(tmp_path, data, **source), "-o", tmp_path / "r", "--dry-run"
        )
        assert result.exit_code == 0, result.stderr
        assert f"conversations: {conversations}" in result.stdout
        assert (f"note: {skipped} rows" in result.stderr) is bool(skipped)


def test_a_clean_file_says_nothing_of_skipped_rows(tmp_path: Path) -> None:
    data = counterfact(tmp_path / "cf.json", GOOD)
    result = invoke("run", experiment(tmp_path, data), "-o", tmp_path / "run")
    assert result.exit_code == 0, result.stderr
    assert "became no conversation" not in result.stdout + result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "is empty (0 bytes); fill it with counterfact rows (docs/datasets.md) or leave"),
        ("[]", "holds no rows (only blank lines or a header); add rows of items"),
        (
            json.dumps(
                [
                    {
                        "case_id": 0,
                        "prompt": "p",
                        "subject": "s",
                        "ground_truth": "x",
                        "target_new": "X",
                    },
                    {
                        "case_id": 1,
                        "prompt": "q",
                        "subject": "s",
                        "ground_truth": "y",
                        "target_new": "Y",
                    },
                ]
            ),
            "has 2 rows and none can be asked: counterfact/0: its false answer 'X' shares an alias "
            "with the true answer (and 1 more rows)",
        ),
    ],
)
def test_a_dataset_with_no_usable_row_is_refused_naming_the_file(
    content: str, message: str, tmp_path: Path
) -> None:
    data = tmp_path / "cf.json"
    data.write_text(content)
    path = experiment(tmp_path, data)
    result = invoke("run", path, "-o", tmp_path / "run")
    assert result.exit_code == 2
    text = result.stderr.replace("\n", " ")
    assert f"{path}: settings: dataset 'cf': {data} {message}" in text
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "run").exists()
