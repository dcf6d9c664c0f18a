from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest

from backchannel.datasets import (
    DatasetError,
    FactItem,
    load_counterfact,
    load_items,
    load_popqa,
    load_shipped,
    load_simpleqa,
    read_items,
    write_items,
)
from backchannel.datasets._text import aliases_overlap, contains_phrase

CF_ROWS = [
    {
        "case_id": 0,
        "prompt": "The mother tongue of Danielle Darrieux is",
        "target_new": "English",
        "subject": "Danielle Darrieux",
        "ground_truth": "French",
    },
    {
        "case_id": 1,
        "prompt": "Toko Yasuda, the",
        "target_new": "piano",
        "subject": "Toko Yasuda",
        "ground_truth": "guitar",
    },
    {
        "case_id": 2,
        "prompt": "Nowhere is located in",
        "target_new": "France",
        "subject": "Nowhere",
        "ground_truth": "france",
    },
]
ROME_ROW = {
    "case_id": 5,
    "requested_rewrite": {
        "prompt": "{} plays the sport of",
        "relation_id": "P641",
        "subject": "David Robinson",
        "target_new": {"str": "baseball", "id": "Q5369"},
        "target_true": {"str": "basketball", "id": "Q5372"},
    },
}


def test_counterfact_flat_and_nested(tmp_path: Path) -> None:
    flat = tmp_path / "cf.json"
    flat.write_text(json.dumps(CF_ROWS))
    loaded = load_counterfact(flat, relations={"The mother tongue of {} is": "P103"})
    # case 2's target_new equals its ground truth up to case: dropped and counted
    assert [d.item_id for d in loaded.dropped] == ["counterfact/2"]
    assert loaded.dropped[0].reason == (
        "its false answer 'France' shares an alias with the true answer"
    )
    first, second = loaded.items
    assert first.question == "Complete the statement: The mother tongue of Danielle Darrieux is ___"
    assert (first.true_answer, first.false_answer, first.relation) == ("French", "English", "P103")
    assert second.relation == "{}, the"  # a template the map does not cover stands for itself

    nested = tmp_path / "cf.jsonl.gz"
    with gzip.open(nested, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(ROME_ROW) + "\n")
    (item,) = load_counterfact(nested).items
    assert item.question == "Complete the statement: David Robinson plays the sport of ___"
    assert (item.true_answer, item.false_answer, item.relation) == (
        "basketball",
        "baseball",
        "P641",
    )


POPQA_TSV = [
    ["id", "subj", "prop", "obj", "question", "possible_answers"],
    [
        "1",
        "George Rankin",
        "occupation",
        "politician",
        "What is George Rankin's occupation?",
        '["politician", "political leader"]',
    ],
    [
        "2",
        "Petrus Camper",
        "occupation",
        "physician",
        "What is Petrus Camper's occupation?",
        '["physician", "doctor"]',
    ],
    [
        "3",
        "John Smith",
        "place of birth",
        "Leeds",
        "In what city was John Smith born?",
        '["Leeds"]',
    ],
]


def test_popqa_tsv_and_reduced_json(tmp_path: Path) -> None:
    tsv = tmp_path / "popQA.tsv"
    with tsv.open("w", newline="") as handle:
        csv.writer(handle, delimiter="\t").writerows(POPQA_TSV)
    loaded = load_popqa(tsv)
    # the two occupations swap answers; Leeds is alone in its relation, so it is dropped
    assert [(i.item_id, i.false_answer) for i in loaded] == [
        ("popqa/1", "physician"),
        ("popqa/2", "politician"),
    ]
    assert loaded.items[0].false_aliases == ("physician", "doctor")
    assert [d.item_id for d in loaded.dropped] == ["popqa/3"]
    assert loaded.dropped[0].reason.startswith("no other item of its pool")

    reduced = tmp_path / "popqa.json"
    rows = [
        {"input": "What is the capital of Var?", "output": '["Toulon", "Tolon"]', "id": 7},
        {"input": "What is the capital of Gard?", "output": '["Nîmes"]', "id": 8},
    ]
    reduced.write_text(json.dumps({"name": "popqa", "dev": rows[:1], "test": rows[1:]}))
    items = load_popqa(reduced).items
    assert [(i.relation, i.true_answer, i.false_answer) for i in items] == [
        ("capital", "Toulon", "Nîmes"),
        ("capital", "Nîmes", "Toulon"),
    ]
    assert items[0].answer_type == "place"


def test_simpleqa_csv(tmp_path: Path) -> None:
    path = tmp_path / "simple_qa_test_set.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["metadata", "problem", "answer"])
        writer.writerow(["{'topic': 'Art', 'answer_type': 'Date'}", "When was A born?", "1901"])
        writer.writerow(["{'topic': 'Art', 'answer_type': 'Date'}", "When was B born?", "1950"])
        writer.writerow(["{'topic': 'Art', 'answer_type': 'Person'}", "Who painted C?", "D E"])
    loaded = load_simpleqa(path)
    assert [(i.true_answer, i.false_answer, i.answer_type) for i in loaded] == [
        ("1901", "1950", "year"),
        ("1950", "1901", "year"),
    ]
    assert len(loaded.dropped) == 1 and loaded.dropped[0].item_id.startswith("simpleqa/")


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        (
            "cf.json",
            json.dumps([CF_ROWS[0], {"case_id": 9, "prompt": "x is", "subject": "x"}]),
            r"cf\.json: row 2 is missing field 'ground_truth'; CounterFact rows need",
        ),
        (
            "p.jsonl",
            '{"id": 1, "question": "q?", "prop": "genre", "obj": "jazz"}\n{"id": 2}\n',
            r"p\.jsonl: row 2 is missing field 'question'; PopQA rows need",
        ),
        (
            "p.json",
            json.dumps({"test": [{"input": "Why?", "output": '["x"]', "id": 1}]}),
            r"row 1 of 'test' is missing field 'prop' .* add a 'prop' field",
        ),
        (
            "s.csv",
            "metadata,problem,answer\n\"{'topic': 'Art'}\",Who?,Bob\n",
            r"s\.csv: row 1 is missing field 'metadata.answer_type'",
        ),
        (
            "s.jsonl",
            '{"metadata": {"topic": "A", "answer_type": "Person"}, "problem": "Who?"}\n',
            r"row 1 is missing field 'answer'",
        ),
        ("bad.jsonl", '{"id": 1,\n', r"row 1 is not valid JSON .* one JSON object per line"),
        ("x.txt", "", r"unsupported file type '\.txt'"),
    ],
)
def test_malformed_rows_raise_dataset_error(
    tmp_path: Path, name: str, content: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    loader = {"cf": load_counterfact, "p": load_popqa, "s": load_simpleqa}.get(
        name.split(".")[0], load_popqa
    )
    with pytest.raises(DatasetError, match=expected) as info:
        loader(path)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", ["counterfact", "popqa", "simpleqa"])
def test_shipped_subsets_follow_the_rules(name: str) -> None:
    loaded = load_shipped(name)  # type: ignore[arg-type]
    assert 150 <= len(loaded) + len(loaded.dropped) <= 300
    assert len(loaded) >= 0.9 * (len(loaded) + len(loaded.dropped))
    for item in loaded:
        assert item.dataset == name
        assert not aliases_overlap(item.true_aliases, item.false_aliases)
        assert not any(contains_phrase(item.question, a) for a in item.false_aliases)
    assert load_shipped(name, limit=5).items == loaded.items[:5]  # type: ignore[arg-type]
    assert load_shipped(name).items == loaded.items  # type: ignore[arg-type]


def test_shipped_files_are_small_and_attributed() -> None:
    data = Path(__file__).parents[2] / "src" / "backchannel" / "datasets" / "data"
    for name in ("counterfact", "popqa", "simpleqa"):
        folder = data / name
        assert (folder / "PROVENANCE.md").is_file()
        assert list(folder.glob("LICENSE*"))
        assert all(f.stat().st_size < 1_000_000 for f in folder.iterdir())


def test_items_file_round_trip(tmp_path: Path, paris: FactItem) -> None:
    path = write_items([paris], tmp_path / "screened.jsonl")
    assert read_items(path).items == (paris,)
    assert load_items(path).items == (paris,)
    record = json.loads(path.read_text())
    del record["relation"]
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(DatasetError, match=r"row 1 is missing field 'relation'"):
        read_items(path)
    record["relation"] = "capital"
    record["false_answer"] = record["false_aliases"][0] = "paris"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(DatasetError, match=r"row 1 is not a valid item.*shares an alias"):
        read_items(path)
