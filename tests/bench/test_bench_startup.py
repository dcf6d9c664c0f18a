"""The start-up benchmark's --quick run measures every command it names, and its table says
which rows have the 0.3 s target (no assertion on the times themselves)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_startup", BENCH / "startup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_startup_bench_quick_measures_each_command(capsys: pytest.CaptureFixture[str]) -> None:
    module = _load()
    rows = module.main(["--quick"])
    assert [row.label for row in rows] == [
        "python -c pass",
        'python -c "import backchannel"',
        "backchannel --help",
        "backchannel status RUN",
        "backchannel metrics RUN --json",
    ]
    for row in rows:
        assert row.runs == 3
        assert math.isfinite(row.cpu_s) and row.cpu_s > 0
        assert math.isfinite(row.wall_s) and row.wall_s > 0
    out = capsys.readouterr().out
    assert "(2 conversations)" in out
    assert out.count("< 0.3 s") == 2  # --help and status carry the target


def test_startup_bench_table_marks_the_targeted_rows() -> None:
    module = _load()
    rows = [
        module.Row("python -c pass", 0.02, 0.03, 3),
        module.Row("backchannel --help", 0.2, 0.3, 3),
        module.Row("backchannel status RUN", 0.4, 0.5, 3),
        module.Row("backchannel metrics RUN --json", 2.0, 2.5, 3),
    ]
    lines = module.table(rows).splitlines()
    # ratios to the interpreter's start: 0.2 / 0.02 = 10, 0.4 / 0.02 = 20, 2.0 / 0.02 = 100
    assert lines[3] == "| `backchannel --help` | 0.200 | 0.300 | 10.0 | < 0.3 s | yes |"
    assert lines[4] == "| `backchannel status RUN` | 0.400 | 0.500 | 20.0 | < 0.3 s | no |"
    assert lines[5] == "| `backchannel metrics RUN --json` | 2.000 | 2.500 | 100.0 |  |  |"
