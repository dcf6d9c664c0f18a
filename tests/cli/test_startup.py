"""The command line starts without the heavy libraries: `import backchannel.cli`, every command's
`--help` and `status RUN` load none of them; the commands that compute load them when they run.

Each check runs in a fresh interpreter (this test process has imported everything already) and
inspects that interpreter's `sys.modules`; nothing here measures time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import invoke

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

HEAVY = (
    "aiohttp",
    "datasets",
    "duckdb",
    "httpx",
    "inspect_ai",
    "jsonschema",
    "matplotlib",
    "networkx",
    "numpy",
    "openai",
    "pandas",
    "pyarrow",
    "scipy",
    "statsmodels",
    "xllamacpp",
    "yaml",
)
"""Libraries no start-up path may import. rich and typer are the command line itself: typer
renders `--help` with rich, and `status` prints through rich consoles."""

# Runs `backchannel ARGS...` through the console script's entry point, in this one process, for
# each argument list (`null` stands for every command's --help), then names the heavy modules
# loaded.
_SCRIPT = """
import contextlib, io, json, sys

from backchannel._entry import main

heavy, commands = json.loads(sys.argv[1]), json.loads(sys.argv[2])
if commands is None:
    from backchannel.cli import app

    commands = [["--help"]] + [[c.name, "--help"] for c in app.registered_commands]
results = []
for args in commands:
    sys.argv = ["backchannel", *args]
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as stop:
            code = stop.code
    results.append({"args": args, "code": code, "out": out.getvalue(), "err": err.getvalue()})
loaded = sorted(name for name in heavy if name in sys.modules)
print(json.dumps({"results": results, "heavy": loaded}))
"""


def _in_fresh_interpreter(commands: list[list[str]] | None) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps(HEAVY), json.dumps(commands)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "100"},
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _sim_run(tmp_path: Path) -> Path:
    """The quickstart on the scripted model, first two conversations."""
    run = tmp_path / "quickstart"
    args = ("run", EXAMPLES / "quickstart.yaml", "-o", run, "--model", "sim", "--limit", "2")
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    return run


def test_importing_the_command_line_loads_no_heavy_library() -> None:
    code = (
        "import sys, json; import backchannel.cli; "
        f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_every_commands_help_loads_no_heavy_library() -> None:
    found = _in_fresh_interpreter(None)
    names = [r["args"][0] for r in found["results"][1:]]
    expected = {"run", "status", "export", "metrics", "report", "judge", "screen", "view", "query"}
    assert expected <= set(names)
    for result in found["results"]:
        assert result["code"] == 0, result
        assert "Usage" in result["out"], result
    assert found["heavy"] == []


def test_status_of_a_run_loads_no_heavy_library(tmp_path: Path) -> None:
    run = _sim_run(tmp_path)
    found = _in_fresh_interpreter([["status", str(run)]])
    (result,) = found["results"]
    assert result["code"] == 0, result
    assert "conversations: 2 done, 0 incomplete, 0 failed" in result["out"]
    assert "Simulated run" in result["out"]
    assert "sim: " in result["out"]  # the per-model usage line
    assert found["heavy"] == []


def test_the_check_sees_the_libraries_a_computing_command_loads(tmp_path: Path) -> None:
    # `metrics` builds frames and statistics: the same inspection finds pandas and scipy there,
    # so an empty list above means they were not loaded, not that the check is blind.
    run = _sim_run(tmp_path)
    found = _in_fresh_interpreter([["status", str(run)], ["metrics", str(run), "--json"]])
    assert [r["code"] for r in found["results"]] == [0, 0]
    assert json.loads(found["results"][1]["out"])["judge"] == "rule"
    assert {"numpy", "pandas", "scipy"} <= set(found["heavy"])
