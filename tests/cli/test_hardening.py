"""Run-level hardening: unusable answers end a run with exit 1 and are named by status, metrics
and report; literal keys and URL user-info stay out of every file; relative data paths resolve
against the experiment file; model text is neutralised in CSV but exact in Parquet."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from conftest import ThreadedServer, WriteExperiment, discussion_experiment, invoke

from backchannel.analysis import RunTables
from backchannel.backends import Request, register_sim, scripted_answer, unregister_sim
from backchannel.experiment import load_experiment
from backchannel.store import RunStore


def http(base_url: str, **endpoint: object) -> dict[str, object]:
    return discussion_experiment(
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"base_url": base_url, **endpoint}],
        retry={"max_retries": 1, "base_delay_s": 0.0, "max_delay_s": 0.0},
    )


def test_a_run_of_unusable_answers_exits_1_and_every_command_names_the_cause(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    server = threaded_server(responder=lambda body: "")
    run = tmp_path / "run"
    result = invoke("run", write_experiment(http(server.base_url, api_key="k")), "-o", run)
    assert result.exit_code == 1
    # 2 questions x (2 agents x 3 checkpoints probes + 2 agents x 2 rounds turns) = 20 answers.
    assert "answers 20: 20 empty, 0 unreadable, 0 refused, 0 failed calls" in result.stdout
    assert "100% of the model answers are unusable (20 empty, 0 unreadable of 20)" in (
        result.stderr.replace("\n", " ")
    )
    status = invoke("status", run)
    assert status.exit_code == 0
    assert "answers 20: 20 empty" in status.stdout
    assert "unusable" in status.stderr
    metrics = invoke("metrics", run)
    assert metrics.exit_code == 0
    assert "100% of the model answers are unusable" in metrics.stderr.replace("\n", " ")
    report = invoke("report", run)
    assert report.exit_code == 0
    html = (run / "report" / "report.html").read_text()
    assert html.index("100% of the model answers are unusable") < html.index("<section")


def test_a_mostly_usable_run_exits_0(write_experiment: WriteExperiment, tmp_path: Path) -> None:
    result = invoke("run", write_experiment(), "-o", tmp_path / "run")
    assert result.exit_code == 0
    assert "answers 20: 0 empty, 0 unreadable, 0 refused, 0 failed calls" in result.stdout


def test_a_block_scalar_key_is_stripped_and_works(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    key = "sk-block-0123456789abcdef"
    server = threaded_server(require_api_key=key)
    text = yaml.safe_dump(http(server.base_url), sort_keys=False).replace(
        f"base_url: {server.base_url}", f"base_url: {server.base_url}\n  api_key: |\n    {key}"
    )
    path = write_experiment(text)
    assert load_experiment(path).experiment.endpoints[0].api_key == key
    run = tmp_path / "run"
    result = invoke("run", path, "-o", run)
    assert result.exit_code == 0, result.stderr
    assert not any(key.encode() in p.read_bytes() for p in run.rglob("*") if p.is_file())


def test_url_user_info_and_keys_in_comments_reach_no_file(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    server = threaded_server()
    secret_url = server.base_url.replace("http://", "http://bob:hunter2secret@")
    text = yaml.safe_dump(http(server.base_url, api_key="k"), sort_keys=False)
    text = f"# old key: sk-proj-commented0123456789\n# old server: {secret_url}\n" + text
    run = tmp_path / "run"
    result = invoke("run", write_experiment(text), "-o", run)
    assert result.exit_code == 0, result.stderr
    assert invoke("export", run, "-o", tmp_path / "tables").exit_code == 0
    for path in [*run.rglob("*"), *(tmp_path / "tables").rglob("*")]:
        if path.is_file():
            data = path.read_bytes()
            assert b"hunter2secret" not in data and b"commented0123456789" not in data, path
    manifest = RunTables.from_directory(tmp_path / "tables").manifest
    assert "# old server: http://<redacted>@127.0.0.1" in manifest["config_as_passed"]
    # A commented-out credential keeps its name and loses its value.
    assert "# old key: <redacted>" in manifest["config_as_passed"]

    # User-info in a base URL cannot be sent beside the key: refused, and not echoed.
    refused = invoke("run", write_experiment(http(secret_url, api_key="k")), "-o", tmp_path / "r2")
    assert refused.exit_code == 2
    assert "holds user-info" in refused.stderr and "hunter2secret" not in refused.stderr
    assert not (tmp_path / "r2").exists()


def test_relative_dataset_paths_resolve_against_the_experiment_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    item = {
        "item_id": "d/1",
        "dataset": "d",
        "question": "What is the capital of France?",
        "true_answer": "Paris",
        "false_answer": "Lyon",
        "true_aliases": ["Paris"],
        "false_aliases": ["Lyon"],
        "relation": "P36",
        "answer_type": "place",
    }
    (project / "data" / "d.jsonl").write_text(json.dumps(item) + "\n")
    experiment = {
        "name": "pp",
        "paradigm": "peer_pressure",
        "settings": {
            "model": "sim",
            "n_agents": 2,
            "k": 1,
            "rounds": 1,
            "judge": None,
            "datasets": [{"name": "d", "path": "data/d.jsonl", "format": "items"}],
        },
    }
    (project / "experiment.yaml").write_text(yaml.safe_dump(experiment))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = invoke("run", project / "experiment.yaml", "-o", "run", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "conversations: 1" in result.stdout
    loaded = load_experiment(Path("../project/experiment.yaml"))
    assert loaded.resolved()["settings"]["datasets"][0]["path"] == str(
        (project / "data" / "d.jsonl").resolve()
    )


@pytest.fixture
def hostile_sim() -> Iterator[str]:
    """`sim/hostile`: every free-text answer starts like a formula and holds a bidi override."""

    def answer(request: Request) -> str:
        text = scripted_answer(request)
        return text if request.constraint is not None else f"=HYPERLINK(1) \u202e{text}\x07"

    register_sim("hostile", answer)
    yield "sim/hostile"
    unregister_sim("hostile")


def test_csv_exports_neutralise_model_text_and_parquet_keeps_it(
    hostile_sim: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    data = discussion_experiment(factors={"model": [hostile_sim]})
    assert invoke("run", write_experiment(data), "-o", run).exit_code == 0
    assert invoke("export", run, "-o", tmp_path / "pq").exit_code == 0
    assert invoke("export", run, "-o", tmp_path / "csv", "--format", "csv").exit_code == 0
    exact = RunTables.from_directory(tmp_path / "pq").events
    spoken = (exact["kind"] == "message") & (exact["model"] != "")
    turns = exact[spoken]["text"]
    assert turns.str.startswith("=HYPERLINK(1) \u202e").all()
    raw = (tmp_path / "csv" / "events.csv").read_text(encoding="utf-8")
    assert "\u202e" not in raw and "\x07" not in raw
    assert ",'=HYPERLINK(1) <U+202E>" in raw
    # Read back, the formula escape is undone; the control characters stay visible.
    read_back = RunTables.from_directory(tmp_path / "csv").events
    texts = read_back[spoken]["text"]
    assert texts.str.startswith("=HYPERLINK(1) <U+202E>").all()
    store = RunStore(run, readonly=True)
    try:
        assert store.tables().events["text"].tolist() == exact["text"].tolist()
    finally:
        store.close()
