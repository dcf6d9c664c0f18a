"""The run flow's guards: literal keys never stored in any YAML form, a fingerprint that covers
only what changes outputs, one process per run directory, a file given as the run directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ThreadedServer, WriteExperiment, discussion_experiment, invoke

from backchannel import orchestration
from backchannel.experiment import load_experiment, redact
from backchannel.store import RunStore

KEY = "sk-literal-0123456789abcdef"
QUICK_RETRY = {"max_retries": 1, "base_delay_s": 0.0, "max_delay_s": 0.0}


# redact --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # at the start of a line
        (f"api_key: {KEY}\nname: t\n", "api_key: <redacted>\nname: t\n"),
        # a block list item, with a sibling field after it
        (
            f"endpoints:\n  - api_key: {KEY}\n    base_url: http://h/v1\n",
            "endpoints:\n  - api_key: <redacted>\n    base_url: http://h/v1\n",
        ),
        # a list item whose key is not its first field
        (
            f"endpoints:\n  - base_url: http://h/v1\n    api_key: {KEY}\n",
            "endpoints:\n  - base_url: http://h/v1\n    api_key: <redacted>\n",
        ),
        # flow form
        (
            f'endpoints: [{{models: "openai/*", api_key: {KEY}}}]\n',
            'endpoints: [{models: "openai/*", api_key: <redacted>}]\n',
        ),
        # a quoted value, double and single
        (
            f'endpoints:\n  - api_key: "{KEY}"\n',
            "endpoints:\n  - api_key: <redacted>\n",
        ),
        (f"api_key: '{KEY}'\n", "api_key: <redacted>\n"),
        # a quoted key
        (
            f'endpoints:\n  - "api_key": {KEY}\n',
            'endpoints:\n  - "api_key": <redacted>\n',
        ),
        # JSON is YAML too
        (
            f'{{"endpoints": [{{"api_key": "{KEY}", "models": "openai/*"}}]}}',
            '{"endpoints": [{"api_key": <redacted>, "models": "openai/*"}]}',
        ),
        # a trailing comment stays; the key's value goes
        (f"api_key: {KEY}  # mine\n", "api_key: <redacted>  # mine\n"),
    ],
)
def test_redact_removes_a_literal_key_in_every_yaml_form(text: str, expected: str) -> None:
    redacted = redact(text)
    assert redacted == expected
    assert KEY not in redacted


def test_redact_keeps_other_fields_and_the_key_variable_name() -> None:
    text = (
        "name: keys#api_key:x  # api_key_env is the safe way\n"
        "endpoints:\n"
        "  - api_key_env: BC_KEY  # not a comment: no space before the # in the name\n"
        "    base_url: http://h/v1\n"
    )
    assert redact(text) == text
    # A URL's fragment (like its query string) can carry a key: it goes, the comment stays.
    fragment = "    base_url: http://h/v1#api_key:x  # a comment\n"
    assert redact(fragment) == "    base_url: http://h/v1?<redacted>  # a comment\n"


def test_redact_of_a_key_shared_through_an_alias_leaves_readable_yaml() -> None:
    # One anchored mapping used twice: the same value node is reached three times, but its text
    # appears once, so it is replaced once.
    text = (
        f"defaults: &d {{api_key: {KEY}}}\n"
        "endpoints:\n"
        "  - *d\n"
        "  - <<: *d\n"
        "    base_url: http://h/v1\n"
    )
    redacted = redact(text)
    assert redacted == text.replace(KEY, "<redacted>")
    assert yaml.safe_load(redacted)["endpoints"][1]["api_key"] == "<redacted>"


def test_redact_of_a_block_scalar_keeps_the_next_line() -> None:
    text = f"endpoints:\n  - api_key: |\n      {KEY}\n    base_url: http://h/v1\n"
    redacted = redact(text)
    assert redacted == "endpoints:\n  - api_key: <redacted>\n    base_url: http://h/v1\n"
    assert yaml.safe_load(redacted)["endpoints"][0]["base_url"] == "http://h/v1"


def test_redact_removes_a_key_left_in_a_comment() -> None:
    # A key commented out when switching to api_key_env is still the key's bytes.
    text = f"endpoints:\n  # - api_key: {KEY}\n  - api_key_env: BC_KEY  #api_key:{KEY}\n"
    redacted = redact(text)
    assert KEY not in redacted
    assert redacted == (
        "endpoints:\n  # - api_key: <redacted>\n  - api_key_env: BC_KEY  #api_key:<redacted>\n"
    )


def files_under(*directories: Path) -> list[Path]:
    return [p for d in directories for p in d.rglob("*") if p.is_file()]


@pytest.mark.parametrize(
    "endpoints",
    [
        "endpoints:\n  - api_key: {key}\n    base_url: {url}\n",
        'endpoints: [{{models: "openai/*", base_url: "{url}", api_key: {key}}}]\n',
        "endpoints:\n  - 'api_key': \"{key}\"\n    base_url: {url}\n",
    ],
    ids=["list-item", "flow", "quoted"],
)
def test_a_literal_key_reaches_the_server_but_no_file(
    endpoints: str,
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    server = threaded_server(require_api_key=KEY)
    data = discussion_experiment(factors={"model": ["openai/fake-model"]}, retry=QUICK_RETRY)
    text = yaml.safe_dump(data, sort_keys=False) + endpoints.format(url=server.base_url, key=KEY)
    path = write_experiment(text)
    run = tmp_path / "run"
    result = invoke("run", path, "-o", run, env={"OPENAI_API_KEY": None})
    assert result.exit_code == 0, result.stderr
    # The server refuses any other key, so every call carried the literal one.
    assert server.server.requests_served > 0
    exports = [tmp_path / "export-parquet", tmp_path / "export-csv"]
    for directory, fmt in zip(exports, ("parquet", "csv"), strict=True):
        exported = invoke("export", run, "-o", directory, "--format", fmt)
        assert exported.exit_code == 0, exported.stderr
    reported = invoke("report", run)
    assert reported.exit_code == 0, reported.stderr
    files = files_under(run, *exports)
    names = {p.name for p in files}
    assert {"run.sqlite", "cache.sqlite", "events.parquet", "conversations.csv"} <= names
    assert any(p.suffix == ".html" for p in files)
    for file in files:
        assert KEY.encode() not in file.read_bytes(), file
    assert b"<redacted>" in (run / "run.sqlite").read_bytes()


def done_count(run: Path) -> int:
    store = RunStore(run)
    try:
        return store.counts()["done"]
    finally:
        store.close()


# fingerprint ---------------------------------------------------------------------------------


def base_experiment() -> dict[str, Any]:
    return discussion_experiment(
        endpoints=[
            {
                "models": "openai/*",
                "base_url": "http://a.example/v1",
                "api_key_env": "KEY_A",
                "max_in_flight": 8,
                "timeout_s": 30.0,
                "price": {"prompt_per_million": 1.0, "completion_per_million": 2.0},
            }
        ],
        retry={"max_retries": 3, "base_delay_s": 0.5, "max_delay_s": 10.0},
        local={"parallel": 2, "context_per_slot": 2048},
    )


def endpoint_change(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["endpoints"][0][field] = value

    return change


def top_change(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data[field] = value

    return change


def settings_change(data: dict[str, Any]) -> None:
    data["settings"]["rounds"] = 3


KEEPS = {
    "base_url": endpoint_change("base_url", "http://b.example/v1"),
    "api_key_env": endpoint_change("api_key_env", "KEY_B"),
    "api_key": endpoint_change("api_key", "sk-rotated"),
    "max_in_flight": endpoint_change("max_in_flight", 2),
    "timeout_s": endpoint_change("timeout_s", 300.0),
    "price": endpoint_change("price", {"prompt_per_million": 5.0}),
    "retry": top_change("retry", {"max_retries": 0}),
    "local": top_change("local", {"parallel": 8, "threads": 1}),
    "name": top_change("name", "renamed"),
}
CHANGES = {
    "seed": top_change("seed", 12),
    "settings": settings_change,
    "factors": top_change("factors", {"model": ["sim"], "variant": ["a"]}),
    "replicates": top_change("replicates", 2),
    "max_reasks": top_change("max_reasks", 0),
    "constrained": endpoint_change("constrained", "grammar"),
}


def fingerprint_of(write: WriteExperiment, data: dict[str, Any], name: str) -> str:
    return orchestration.fingerprint(load_experiment(write(data, name=name)))


@pytest.mark.parametrize("field", list(KEEPS))
def test_fingerprint_ignores_how_the_run_connects(
    field: str, write_experiment: WriteExperiment
) -> None:
    changed = base_experiment()
    KEEPS[field](changed)
    assert changed != base_experiment()
    assert fingerprint_of(write_experiment, changed, "changed.yaml") == fingerprint_of(
        write_experiment, base_experiment(), "base.yaml"
    )


@pytest.mark.parametrize("field", list(CHANGES))
def test_fingerprint_covers_what_changes_outputs(
    field: str, write_experiment: WriteExperiment
) -> None:
    changed = base_experiment()
    CHANGES[field](changed)
    assert fingerprint_of(write_experiment, changed, "changed.yaml") != fingerprint_of(
        write_experiment, base_experiment(), "base.yaml"
    )


def test_resume_accepts_a_new_max_in_flight_and_refuses_a_new_seed(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    first = invoke("run", write_experiment(base_experiment()), "-o", run, "--limit", "1")
    assert first.exit_code == 0, first.stderr

    slower = base_experiment()
    slower["endpoints"][0]["max_in_flight"] = 1
    resumed = invoke("run", write_experiment(slower), "-o", run)
    assert resumed.exit_code == 0, resumed.stderr
    assert "resuming: 1 conversations already stored, 1 to run" in resumed.stderr
    assert done_count(run) == 2

    reseeded = base_experiment()
    reseeded["seed"] = 12
    refused = invoke("run", write_experiment(reseeded), "-o", run)
    assert refused.exit_code == 2
    assert f"{run} holds a run of a different experiment" in refused.stderr
    assert done_count(run) == 2
    store = RunStore(run)
    try:
        assert store.manifest()["seed"] == 11
    finally:
        store.close()


# the run directory ---------------------------------------------------------------------------


def test_a_second_process_on_a_run_directory_is_refused(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path, run = write_experiment(), tmp_path / "run"
    assert invoke("run", path, "-o", run, "--limit", "1").exit_code == 0
    holder = RunStore(run)
    holder.lock()
    try:
        refused = invoke("run", path, "-o", run)
        assert refused.exit_code == 2
        assert f"another backchannel process is running in {run}" in refused.stderr
        assert holder.counts()["done"] == 1
    finally:
        holder.close()
    # Closing the holder releases the directory.
    resumed = invoke("run", path, "-o", run)
    assert resumed.exit_code == 0, resumed.stderr
    assert done_count(run) == 2


def test_a_file_as_the_run_directory_is_one_clear_error(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    target = tmp_path / "results.txt"
    target.write_text("mine")
    result = invoke("run", write_experiment(), "-o", target)
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)  # not an unexpected exception
    assert result.stderr.strip() == f"error: {target} is a file; pass a directory with -o"
    assert target.read_text() == "mine"


def test_report_to_a_file_is_one_clear_error(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    assert invoke("run", write_experiment(), "-o", run, "--limit", "1").exit_code == 0
    target = tmp_path / "report.html"
    target.write_text("mine")
    result = invoke("report", run, "-o", target)
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)  # not an unexpected exception
    assert result.stderr.strip() == f"error: {target} is a file; pass a directory with -o"
    assert target.read_text() == "mine"
