"""Messages that name the right problem: an experiment or data file that is a FIFO or a device
(it would block or never end if read), an empty dataset, metrics and reports of a run with no
conversations, and a `view --host` that names no address of this machine."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from conftest import WriteExperiment, discussion_experiment, invoke

from backchannel.backends import register_sim, unregister_sim


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "experiment.yaml"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("fifo", "is a FIFO (named pipe), not a regular file"),
        ("/dev/zero", "is a character device, not a regular file"),
        ("/dev/urandom", "is a character device, not a regular file"),
        ("/dev/null", "is a character device, not a regular file"),
    ],
)
def test_an_experiment_file_that_is_no_regular_file_is_named_as_such(
    name: str, problem: str, fifo: Path, tmp_path: Path
) -> None:
    path = fifo if name == "fifo" else Path(name)
    for options in (["--dry-run"], []):
        result = invoke("run", path, "-o", tmp_path / "run", *options)
        assert result.exit_code == 2
        message = " ".join(result.stderr.split())
        assert message == (
            f"error: {path} {problem}; give the path of an experiment file (YAML) saved on disk"
        )
        assert "no such experiment file" not in result.stderr
        assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("missing.yaml", "missing.yaml: no such experiment file; check the path"),
        ("folder", "folder is a directory; give the experiment file (YAML) inside it"),
        ("afile/x.yaml", "x.yaml: no such experiment file"),
    ],
)
def test_missing_files_and_folders_keep_their_own_messages(
    path: str, message: str, tmp_path: Path
) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile").write_text("x")
    result = invoke("run", tmp_path / path, "-o", tmp_path / "run")
    assert result.exit_code == 2 and message in result.stderr.replace("\n", " ")


def peer_pressure(tmp_path: Path, data: str) -> Path:
    settings = {
        "model": "sim",
        "n_agents": 2,
        "k": 1,
        "rounds": 1,
        "judge": None,
        "datasets": [{"name": "d", "path": data, "format": "items"}],
    }
    path = tmp_path / "pp.yaml"
    path.write_text(
        yaml.safe_dump({"name": "pp", "paradigm": "peer_pressure", "settings": settings})
    )
    return path


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("fifo", "is a FIFO (named pipe), not a regular file; give a data file saved on disk"),
        ("/dev/zero", "is a character device, not a regular file; give a data file saved on disk"),
        ("empty", "is empty (0 bytes); fill it with items rows (docs/datasets.md)"),
        ("blank", "holds no rows (only blank lines or a header); add rows of items"),
        ("missing", "no such file"),
    ],
)
def test_a_data_file_that_cannot_give_items_is_named_with_the_fix(
    data: str, problem: str, tmp_path: Path
) -> None:
    paths = {"fifo": tmp_path / "d.jsonl", "empty": tmp_path / "e.jsonl"}
    os.mkfifo(paths["fifo"])
    paths["empty"].write_text("")
    (tmp_path / "b.jsonl").write_text("\n  \n")
    paths["blank"], paths["missing"] = tmp_path / "b.jsonl", tmp_path / "m.jsonl"
    given = str(paths.get(data, data))
    experiment = peer_pressure(tmp_path, given)
    result = invoke("run", experiment, "-o", tmp_path / "run")
    assert result.exit_code == 2
    message = result.stderr.replace("\n", " ")
    assert f"{experiment}: settings: dataset 'd': " in message and problem in message
    assert "has no usable items" not in message
    assert not (tmp_path / "run").exists()


# metrics and report of a run with no conversations -------------------------------------------


def empty_run(write_experiment: WriteExperiment, tmp_path: Path, data: dict[str, object]) -> Path:
    """A run directory whose manifest is written but which stored no conversation (a run
    killed before its first conversation finished)."""
    from backchannel import orchestration
    from backchannel.experiment import load_experiment

    run = tmp_path / "run"
    store = orchestration.open_run_directory(run, load_experiment(write_experiment(data)))
    store.close()
    return run


@pytest.mark.parametrize(
    "data",
    [
        discussion_experiment(),
        {
            "name": "pp",
            "paradigm": "peer_pressure",
            "settings": {"model": "sim", "n_agents": 2, "k": 1, "rounds": 1},
        },
    ],
)
def test_metrics_and_report_of_a_run_without_conversations_say_so(
    data: dict[str, object], write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = empty_run(write_experiment, tmp_path, data)
    assert invoke("export", run, "-o", tmp_path / "tables").exit_code == 0
    for args in (["metrics", run], ["metrics", "--tables", tmp_path / "tables"], ["report", run]):
        result = invoke(*args)
        assert result.exit_code == 2
        message = result.stderr.replace("\n", " ")
        assert "holds no conversations to measure (none has finished" in message
        assert "judge" not in message and "Traceback" not in message
    assert not (run / "report").exists()


@pytest.fixture
def broken_sim() -> Iterator[str]:
    def answer(request: object) -> str:
        raise RuntimeError("this model is broken")

    register_sim("broken", answer)
    yield "sim/broken"
    unregister_sim("broken")


def test_metrics_of_a_run_whose_conversations_all_failed_say_to_rerun(
    broken_sim: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    path = write_experiment(discussion_experiment(factors={"model": [broken_sim]}))
    assert invoke("run", path, "-o", run).exit_code == 1
    result = invoke("metrics", run)
    assert result.exit_code == 2
    assert "holds no conversations to measure (2 failed and kept only their error: run the " in (
        result.stderr.replace("\n", " ")
    )


# view --host --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("999.1.1.1", "--host 999.1.1.1 is not an IP address (four numbers 0..255)"),
        ("1.2.3", "--host 1.2.3 is not an IP address"),
        ("", "--host '' is no address and no known host name"),
        ("no-such-host.invalid", "--host 'no-such-host.invalid' is no address and no known host"),
        ("192.0.2.1", "192.0.2.1 is not an address of this machine"),
    ],
)
def test_a_view_host_that_names_no_address_here_is_refused_before_any_warning(
    host: str, message: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    assert invoke("run", write_experiment(), "-o", run).exit_code == 0
    result = invoke("view", run, "--host", host, "--port", "0")
    assert result.exit_code == 2
    text = result.stderr.replace("\n", " ")
    assert message in text and "127.0.0.1 (the default)" in text
    assert "warning" not in text and "--port" not in text


def test_a_failed_runs_error_lines_say_where_the_whole_traceback_is(
    broken_sim: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    path = write_experiment(discussion_experiment(factors={"model": [broken_sim]}))
    ran = invoke("run", path, "-o", run)
    assert ran.exit_code == 1
    text = ran.stderr.replace("\n", " ")
    assert "2 x RuntimeError: this model is broken" in text
    assert f"the whole traceback of each is stored: backchannel status {run} --errors" in text
    assert f"backchannel view {run}" in text
    # status says the same, and with --errors prints one whole traceback per distinct error
    assert "--errors" in invoke("status", run).stderr.replace("\n", " ")
    full = invoke("status", run, "--errors")
    assert full.exit_code == 0
    assert "Traceback (most recent call last)" in full.stdout
    assert full.stdout.count("RuntimeError: this model is broken") == 1
    assert "conversation model=sim/broken/q1/0:" in full.stdout
