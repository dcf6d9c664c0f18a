"""More than a hundred bad inputs, each refused the same way: the documented exit code, one
line naming the problem, no traceback, and nothing written anywhere."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import discussion_experiment, invoke

KEY = "sk-test-0123456789abcdef"
NO_ENV = {"OPENAI_API_KEY": None, "OPENAI_BASE_URL": None, "BC_UNSET_KEY": None}
Setup = Callable[[Path, Path], list[str | Path]]
"""(scratch folder, a copy of a finished run) -> the command's arguments."""


@dataclass(frozen=True)
class Case:
    name: str
    setup: Setup
    words: str
    exit_code: int = 2
    env: tuple[tuple[str, str], ...] = ()


def yaml_text(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False)


def write(folder: Path, text: str | bytes, name: str = "experiment.yaml") -> Path:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def run_text(text: str | bytes, *extra: str) -> Setup:
    """`run` of an experiment file with this text into a new run directory."""

    def setup(folder: Path, _run: Path) -> list[str | Path]:
        return ["run", write(folder, text), "-o", folder / "out", *extra]

    return setup


def run_data(*extra: str, **overrides: Any) -> Setup:
    return run_text(yaml_text(discussion_experiment(**overrides)), *extra)


def with_settings(**changes: Any) -> Setup:
    data = discussion_experiment()
    data["settings"].update(changes)
    return run_text(yaml_text(data))


def endpoint(**fields: Any) -> Setup:
    return run_data(
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"api_key": KEY, **fields}],
    )


def peer_pressure(dataset: dict[str, Any], files: dict[str, str | bytes] | None = None) -> Setup:
    def setup(folder: Path, _run: Path) -> list[str | Path]:
        for name, content in (files or {}).items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        data = {
            "name": "pp",
            "paradigm": "peer_pressure",
            "settings": {
                "model": "sim",
                "n_agents": 2,
                "k": 1,
                "rounds": 1,
                "judge": None,
                "datasets": [dataset],
            },
        }
        return ["run", write(folder, yaml_text(data)), "-o", folder / "out"]

    return setup


def bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    body = "\n".join(lines)
    return (
        f"{body}\nname: bomb\nparadigm: discussion\nfactors: {{model: [sim], v: *a{levels - 1}}}\n"
    )


ITEM = {
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


def items_jsonl(*items: dict[str, Any]) -> str:
    return "".join(json.dumps(item) + "\n" for item in items)


# read commands on a copy of a finished run -----------------------------------------------------


def on_run(command: str, *extra: str, damage: Callable[[Path], None] | None = None) -> Setup:
    def setup(folder: Path, run: Path) -> list[str | Path]:
        if damage is not None:
            damage(run)
        args: list[str | Path] = [command, run, *extra]
        if command in ("export", "report") and "-o" not in extra:
            args += ["-o", folder / "out"]
        return args

    return setup


def zero_bytes(name: str) -> Callable[[Path], None]:
    return lambda run: (run / name).write_bytes(b"")


def garbage(name: str) -> Callable[[Path], None]:
    return lambda run: (run / name).write_bytes(b"this is not a database\n" * 100)


def truncated(name: str) -> Callable[[Path], None]:
    def cut(run: Path) -> None:
        path = run / name
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])

    return cut


def sql(run: Path, statement: str) -> None:
    db = sqlite3.connect(run / "run.sqlite", isolation_level=None)
    try:
        db.execute(statement)
    finally:
        db.close()


def other_sqlite(run: Path) -> None:
    (run / "run.sqlite").unlink()
    sql(run, "CREATE TABLE notes (text TEXT)")


def newer_schema(run: Path) -> None:
    sql(run, "PRAGMA user_version = 99")


def resume_into(damage: Callable[[Path], None]) -> Setup:
    def setup(folder: Path, run: Path) -> list[str | Path]:
        damage(run)
        return ["run", write(folder, yaml_text(discussion_experiment(items_limit=1))), "-o", run]

    return setup


def tables_folder(make: Callable[[Path, Path], None], *command: str) -> Setup:
    def setup(folder: Path, run: Path) -> list[str | Path]:
        tables = folder / "tables"
        tables.mkdir()
        make(tables, run)
        return [*command, "--tables", tables]

    return setup


def exported(fmt: str) -> Callable[[Path, Path], None]:
    def make(tables: Path, run: Path) -> None:
        assert invoke("export", run, "-o", tables, "--format", fmt).exit_code == 0

    return make


def both_formats(tables: Path, run: Path) -> None:
    exported("parquet")(tables, run)
    for name in ("events", "labels", "conversations"):
        shutil.copy(tables / f"{name}.parquet", tables / f"{name}.csv")


def garbage_parquet(tables: Path, run: Path) -> None:
    exported("parquet")(tables, run)
    (tables / "events.parquet").write_bytes(b"PAR1 not really")


def nothing(tables: Path, run: Path) -> None:
    return None


def a_file(name: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_text("mine")
        return path

    return make


def out_is(make: Callable[[Path], Path], command: str) -> Setup:
    def setup(folder: Path, run: Path) -> list[str | Path]:
        target = make(folder)
        if command == "run":
            return ["run", write(folder, yaml_text(discussion_experiment())), "-o", target]
        return [command, run, "-o", target]

    return setup


def under_a_file(command: str) -> Setup:
    return out_is(lambda folder: a_file("plain")(folder) / "sub", command)


def busy_folder(folder: Path) -> Path:
    target = folder / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    return target


def missing_experiment(folder: Path, run: Path) -> list[str | Path]:
    return ["run", folder / "missing.yaml", "-o", folder / "out"]


def experiment_is_a_folder(folder: Path, run: Path) -> list[str | Path]:
    (folder / "exp").mkdir()
    return ["run", folder / "exp", "-o", folder / "out"]


def different_experiment(folder: Path, run: Path) -> list[str | Path]:
    text = yaml_text(discussion_experiment(seed=999))
    return ["run", write(folder, text), "-o", run]


def run_is(make: Callable[[Path], Path]) -> Setup:
    return lambda folder, run: ["status", make(folder)]


CASES = [
    # encodings, size, YAML ------------------------------------------------------------------
    Case("latin-1", run_text("name: caf\xe9\n".encode("latin-1")), "not UTF-8 text"),
    Case("utf-16-le", run_text("name: x\n".encode("utf-16")), "is UTF-16 text"),
    Case("utf-16-be", run_text(b"\xfe\xff" + "name: x\n".encode("utf-16-be")), "UTF-16"),
    Case("nul-bytes", run_text(b"name: x\x00\nparadigm: discussion\n"), "NUL bytes"),
    Case("too-large", run_text("# pad\n" * 400_000 + "name: x\n"), "above the 2 MiB limit"),
    Case("alias-bomb", run_text(bomb()), "expands to more than 100000 values"),
    Case("deep-nesting", run_text("name: " + "[" * 20000 + "]" * 20000), "not valid YAML"),
    Case("syntax-error", run_text("name: [unclosed\n"), "not valid YAML at line"),
    Case("tab-indent", run_text("name: x\nsettings:\n\tagents: 2\n"), "not valid YAML"),
    Case("python-tag", run_text("name: !!python/object:os.system x\n"), "not valid YAML"),
    Case("dup-top", run_text("name: a\nname: b\nparadigm: discussion\n"), "duplicate key 'name'"),
    Case(
        "dup-line",
        run_text("name: a\nparadigm: discussion\nseed: 1\nseed: 2\n"),
        "duplicate key 'seed' at line 4 (first at line 3)",
    ),
    Case(
        "dup-nested",
        run_text("name: a\nparadigm: discussion\nsettings:\n  agents: 2\n  agents: 3\n"),
        "duplicate key 'agents' at line 5",
    ),
    Case("dup-flow", run_text("name: a\nparadigm: discussion\nretry: {a: 1, a: 2}\n"), "'a'"),
    Case("a-list", run_text("- a\n- b\n"), "must be a mapping of fields"),
    Case("a-scalar", run_text("just words\n"), "must be a mapping of fields"),
    Case("empty-file", run_text(""), "must be a mapping of fields"),
    Case("only-comments", run_text("# nothing here\n"), "must be a mapping of fields"),
    # top-level fields -------------------------------------------------------------------------
    Case("unknown-field", run_data(nmae="x"), "nmae: unknown field"),
    Case("empty-name", run_data(name=""), "name: String should have at least 1 character"),
    Case("no-name", run_text("paradigm: discussion\n"), "name: Field required"),
    Case("no-paradigm", run_text("name: x\n"), "paradigm: Field required"),
    Case("unknown-paradigm", run_data(paradigm="debate"), "unknown paradigm 'debate'"),
    Case("replicates-0", run_data(replicates=0), "replicates: Input should be greater"),
    Case("replicates-text", run_data(replicates="two"), "replicates: Input should be a valid"),
    Case("replicates-neg", run_data(replicates=-1), "replicates"),
    Case("seed-text", run_data(seed="abc"), "seed: Input should be a valid integer"),
    Case("items-limit-0", run_data(items_limit=0), "items_limit"),
    Case("max-reasks-neg", run_data(max_reasks=-1), "max_reasks"),
    # factors ----------------------------------------------------------------------------------
    Case("factors-list", run_data(factors=["model"]), "factors: Input should be a valid dict"),
    Case("factor-empty", run_data(factors={"model": []}), "factor 'model' has no levels"),
    Case("factor-repeat", run_data(factors={"model": ["sim", "sim"]}), "repeats a level"),
    Case("factor-reserved", run_data(factors={"model": ["sim"], "status": [1]}), "'status'"),
    Case("factor-typo", run_data(factors={"modle": ["sim"]}), "did you mean 'model'"),
    Case("model-no-provider", run_data(factors={"model": ["gpt-4o"]}), "not 'provider/model'"),
    Case("model-bad-provider", run_data(factors={"model": ["foo/bar"]}), "not 'provider/model'"),
    Case("model-override", run_data("--model", "gpt-4o"), "model 'gpt-4o' is not"),
    Case("exclude-unknown", run_data(exclude=[{"modle": "sim"}]), "unknown factors ['modle']"),
    Case(
        "replicates-by-unknown",
        run_data(replicates_by=[{"when": {"x": 1}, "replicates": 2}]),
        "replicates_by.0.when names unknown factors ['x']",
    ),
    Case("levels-collide", run_data(factors={"model": ["sim"], "v": [1, "1"]}), "same name"),
    Case(
        "agents-factor-0",
        run_data(factors={"model": ["sim"], "agents": [0]}),
        "level 0 is not allowed",
    ),
    # retry, local -----------------------------------------------------------------------------
    Case("max-wait-neg", run_data(retry={"max_wait_s": -1}), "retry.max_wait_s"),
    Case("max-retries-neg", run_data(retry={"max_retries": -1}), "retry.max_retries"),
    Case("retry-unknown", run_data(retry={"tries": 3}), "retry.tries: unknown field"),
    Case("retry-not-mapping", run_data(retry=3), "retry: Input should be"),
    Case("local-parallel-0", run_data(local={"parallel": 0}), "local.parallel"),
    Case("local-context-small", run_data(local={"context_per_slot": 8}), "context_per_slot"),
    # endpoints --------------------------------------------------------------------------------
    Case("url-not-a-url", endpoint(base_url="not a url"), "'not a url' holds spaces"),
    Case("url-ftp", endpoint(base_url="ftp://host/v1"), "is not an http:// or https:// URL"),
    Case("url-port-99999", endpoint(base_url="http://127.0.0.1:99999/v1"), "invalid port"),
    Case("url-port-0", endpoint(base_url="http://127.0.0.1:0/v1"), "invalid port"),
    Case("url-port-text", endpoint(base_url="http://127.0.0.1:abc/v1"), "invalid port"),
    Case("url-no-host", endpoint(base_url="http:///v1"), "names no host"),
    Case("url-no-scheme", endpoint(base_url="127.0.0.1:8000/v1"), "not an http"),
    Case("url-user-info", endpoint(base_url="http://u:pw@h/v1"), "holds user-info"),
    Case("url-spaces", endpoint(base_url=" http://h/v1"), "holds spaces"),
    Case("url-newline", endpoint(base_url="http://h/v1\nx"), "control characters"),
    Case(
        "url-env",
        endpoint(),
        "OPENAI_BASE_URL: 'file:///etc' is not an http",
        env=(("OPENAI_BASE_URL", "file:///etc"),),
    ),
    Case("key-two-lines", endpoint(base_url="http://h/v1", api_key="sk-a\nsk-b"), "line breaks"),
    Case("key-empty", endpoint(base_url="http://h/v1", api_key="  "), "the key is empty"),
    Case("key-spaces", endpoint(base_url="http://h/v1", api_key="sk a b"), "holds spaces"),
    Case("endpoints-mapping", run_data(endpoints={"base_url": "x"}), "endpoints: Input should"),
    Case("endpoint-unknown", endpoint(base_url="http://h/v1", key="k"), "endpoints.0.key"),
    Case("endpoint-inflight-0", endpoint(base_url="http://h/v1", max_in_flight=0), "max_in_flight"),
    Case("endpoint-timeout-0", endpoint(base_url="http://h/v1", timeout_s=0), "timeout_s"),
    Case(
        "endpoint-constrained", endpoint(base_url="http://h/v1", constrained="xml"), "constrained"
    ),
    Case(
        "endpoint-price-neg",
        endpoint(base_url="http://h/v1", price={"prompt_per_million": -1}),
        "price.prompt_per_million",
    ),
    Case(
        "key-env-unset",
        endpoint(base_url="http://h/v1", api_key=None, api_key_env="BC_UNSET_KEY"),
        "environment variable BC_UNSET_KEY",
    ),
    Case(
        "no-endpoint-matches",
        endpoint(base_url="http://h/v1", models="openai/other-*"),
        "no endpoint serves openai/fake-model",
    ),
    Case(
        "hosted-without-key",
        run_data(factors={"model": ["openai/gpt-4o-mini"]}),
        "no key is set",
    ),
    # discussion settings ----------------------------------------------------------------------
    Case("settings-unknown", with_settings(agnets=3), "settings.agnets: unknown field"),
    Case("settings-rounds-text", with_settings(rounds="many"), "settings.rounds"),
    Case("settings-agents-0", with_settings(agents=0), "settings.agents"),
    Case("settings-agents-11", with_settings(agents=11), "settings.agents"),
    Case("settings-temperature", with_settings(temperature=5), "settings.temperature"),
    Case("settings-order", with_settings(order="random-ish"), "settings.order"),
    Case("settings-model", with_settings(model="llama3"), "settings.model: model 'llama3'"),
    Case(
        "question-slash",
        with_settings(questions=[{"id": "a/b", "question": "Why?"}]),
        "settings.questions.0.id",
    ),
    Case(
        "question-empty",
        with_settings(questions=[{"id": "a", "question": ""}]),
        "settings.questions.0.question",
    ),
    Case(
        "question-dup-ids",
        with_settings(questions=[{"id": "a", "question": "x?"}, {"id": "a", "question": "y?"}]),
        "item id 'a' appears twice",
    ),
    Case("sim-unknown", run_data(factors={"model": ["sim/nobody"]}), "sim/nobody"),
    # datasets (peer pressure) -----------------------------------------------------------------
    Case(
        "data-missing",
        peer_pressure({"name": "d", "path": "no.jsonl", "format": "items"}),
        "no such file",
    ),
    Case(
        "data-directory",
        peer_pressure({"name": "d", "path": "data", "format": "items"}, {"data/x": "x"}),
        "is a directory",
    ),
    Case(
        "data-not-utf8",
        peer_pressure(
            {"name": "d", "path": "d.jsonl", "format": "items"}, {"d.jsonl": b"\xff\xfe\x00"}
        ),
        "d.jsonl: not UTF-8 text",
    ),
    Case(
        "data-bad-json",
        peer_pressure({"name": "d", "path": "d.jsonl", "format": "items"}, {"d.jsonl": "{oops\n"}),
        "d.jsonl: row 1 is not valid JSON",
    ),
    Case(
        "data-bad-suffix",
        peer_pressure({"name": "d", "path": "d.txt", "format": "items"}, {"d.txt": "x"}),
        "unsupported file type '.txt'",
    ),
    Case(
        "data-bad-gzip",
        peer_pressure({"name": "d", "path": "d.jsonl.gz", "format": "items"}, {"d.jsonl.gz": "x"}),
        "d.jsonl.gz: not a complete gzip file",
    ),
    Case(
        "data-cut-gzip",
        peer_pressure(
            {"name": "d", "path": "d.jsonl.gz", "format": "items"},
            {"d.jsonl.gz": gzip.compress(items_jsonl(ITEM).encode())[:20]},
        ),
        "d.jsonl.gz: not a complete gzip file",
    ),
    Case(
        "data-dup-ids",
        peer_pressure(
            {"name": "d", "path": "d.jsonl", "format": "items"},
            {"d.jsonl": items_jsonl(ITEM, ITEM)},
        ),
        "duplicate item ids",
    ),
    Case(
        "data-missing-field",
        peer_pressure(
            {"name": "d", "path": "d.jsonl", "format": "items"},
            {"d.jsonl": items_jsonl({k: v for k, v in ITEM.items() if k != "question"})},
        ),
        "missing field 'question'",
    ),
    Case(
        "data-no-format", peer_pressure({"name": "d", "path": "d.jsonl"}), "a path needs a format"
    ),
    Case("data-unknown-shipped", peer_pressure({"name": "trivia"}), "is not shipped"),
    Case(
        "data-bad-format",
        peer_pressure({"name": "d", "path": "d.jsonl", "format": "csv"}),
        "settings.datasets.0.format",
    ),
    Case(
        "data-json-object",
        peer_pressure(
            {"name": "d", "path": "d.json", "format": "counterfact"}, {"d.json": '{"a": 1}'}
        ),
        "d.json: expected a JSON array",
    ),
    # paths of the run command -----------------------------------------------------------------
    Case("experiment-missing", missing_experiment, "no such experiment file"),
    Case("experiment-folder", experiment_is_a_folder, "is a directory"),
    Case("run-out-is-file", out_is(a_file("plain"), "run"), "is a file"),
    Case("run-out-under-file", under_a_file("run"), "a part of the path is a file"),
    Case("run-out-busy", out_is(busy_folder, "run"), "exists and is not a run directory"),
    Case("run-different-experiment", different_experiment, "a run of a different experiment"),
    # damaged stores -------------------------------------------------------------------------
    Case("status-zero-store", on_run("status", damage=zero_bytes("run.sqlite")), "is empty"),
    Case("status-garbage-store", on_run("status", damage=garbage("run.sqlite")), "not an SQLite"),
    Case("status-cut-store", on_run("status", damage=truncated("run.sqlite")), "left untouched"),
    Case("status-other-db", on_run("status", damage=other_sqlite), "holds no run store"),
    Case("status-newer", on_run("status", damage=newer_schema), "schema version 99"),
    Case("metrics-garbage", on_run("metrics", damage=garbage("run.sqlite")), "not an SQLite"),
    Case("metrics-zero", on_run("metrics", damage=zero_bytes("run.sqlite")), "is empty"),
    Case("report-zero", on_run("report", damage=zero_bytes("run.sqlite")), "is empty"),
    Case("report-cut", on_run("report", damage=truncated("run.sqlite")), "left untouched"),
    Case("export-garbage", on_run("export", damage=garbage("run.sqlite")), "not an SQLite"),
    Case("export-cut", on_run("export", damage=truncated("run.sqlite")), "left untouched"),
    Case(
        "judge-zero",
        on_run("judge", "--judge", "rule", "--as", "r2", damage=zero_bytes("run.sqlite")),
        "is empty",
    ),
    Case("resume-zero-store", resume_into(zero_bytes("run.sqlite")), "is empty (0 bytes)"),
    Case("resume-garbage-store", resume_into(garbage("run.sqlite")), "not an SQLite"),
    Case("resume-cut-store", resume_into(truncated("run.sqlite")), "left untouched"),
    Case("resume-zero-cache", resume_into(zero_bytes("cache.sqlite")), "response cache"),
    Case("resume-garbage-cache", resume_into(garbage("cache.sqlite")), "response cache"),
    Case("resume-cut-cache", resume_into(truncated("cache.sqlite")), "response cache"),
    # run directories that are not ones ------------------------------------------------------
    Case("status-missing", run_is(lambda f: f / "nowhere"), "is not a run directory"),
    Case("status-empty-folder", run_is(lambda f: (f / "e").mkdir() or f / "e"), "no run.sqlite"),
    Case("status-a-file", run_is(a_file("plain")), "is a file, not a run directory"),
    # exported tables ------------------------------------------------------------------------
    Case("metrics-run-and-tables", tables_folder(exported("csv"), "metrics", "RUN"), "not both"),
    Case(
        "agree-run-and-tables", tables_folder(exported("csv"), "agree", "RUN", "a", "b"), "not both"
    ),
    Case("tables-both-formats", tables_folder(both_formats, "metrics"), "both Parquet and CSV"),
    Case("tables-garbage", tables_folder(garbage_parquet, "metrics"), "cannot read the exported"),
    Case("tables-empty", tables_folder(nothing, "metrics"), "has no events.parquet or events.csv"),
    Case(
        "tables-missing",
        lambda folder, run: ["metrics", "--tables", folder / "none"],
        "is not a folder of exported tables",
    ),
    Case("export-out-file", out_is(a_file("t.parquet"), "export"), "is a file"),
    Case("export-out-under-file", under_a_file("export"), "cannot write the tables"),
    Case("report-out-file", out_is(a_file("r.html"), "report"), "is a file"),
    Case("report-out-under-file", under_a_file("report"), "cannot write the report"),
    Case(
        "metrics-unread-option", on_run("metrics", "--judge", "nobody"), "does not read this option"
    ),
]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small finished run on the sim (one question), copied for each case."""
    folder = tmp_path_factory.mktemp("finished")
    path = write(folder, yaml_text(discussion_experiment(items_limit=1)))
    result = invoke("run", path, "-o", folder / "run", env=NO_ENV)
    assert result.exit_code == 0, result.stderr
    return folder / "run"


def snapshot(folder: Path) -> dict[str, str]:
    """Every file and folder under `folder` with a hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file()
        else "/"
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture
def scratch(tmp_path: Path, finished_run: Path) -> Iterator[tuple[Path, Path]]:
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    yield tmp_path, run


def test_the_battery_is_large() -> None:
    assert len(CASES) >= 100
    assert len({case.name for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_bad_input_is_one_clear_line_and_writes_nothing(
    case: Case, scratch: tuple[Path, Path]
) -> None:
    folder, run = scratch
    args = [run if a == "RUN" else a for a in case.setup(folder, run)]
    before = snapshot(folder)
    result = invoke(*args, env={**NO_ENV, **dict(case.env)})
    message = result.stderr.strip()
    assert isinstance(result.exception, SystemExit), result.exception  # no unexpected exception
    assert result.exit_code == case.exit_code, message
    assert "Traceback" not in result.output + result.stderr
    assert message.startswith("error: ") and "\n" not in message, message
    assert case.words in message, message
    assert snapshot(folder) == before  # nothing written, nothing changed
