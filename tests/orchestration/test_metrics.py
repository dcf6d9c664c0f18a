"""A run's metrics with the kit's sections computed in a forked copy of the process are the
metrics computed in one process, and a child that cannot compute them (its work needs the
store, which it must not read) leaves them to the parent."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import backchannel as bc
from backchannel import _beside
from backchannel.analysis import _tables, jsonable

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux")


def _metrics_both_ways(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[object, object, list[bool]]:
    answered_here: list[bool] = []
    result = _beside.Beside.result

    def recording(self: _beside.Beside[object]) -> object:
        value = result(self)
        answered_here.append(self.answered_here)
        return value

    monkeypatch.setattr(_beside.Beside, "result", recording)
    monkeypatch.setattr(_beside, "can_fork", lambda: True)
    monkeypatch.setattr(_tables, "FORK_FROM_EVENTS", 0)
    forked = jsonable(bc.open_run(run).metrics().as_json())
    monkeypatch.setattr(_tables, "FORK_FROM_EVENTS", 10**12)
    here = jsonable(bc.open_run(run).metrics().as_json())
    return forked, here, answered_here


def test_kit_sections_from_a_fork_are_those_computed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    bc.run(EXAMPLES / "quickstart.yaml", run, model="sim/population")
    forked, here, answered_here = _metrics_both_ways(run, monkeypatch)
    assert answered_here == [False, True]  # the child's sections, then the parent's own
    assert forked == here
    assert {"validity", "divergence", "influence"} <= set(here)  # type: ignore[arg-type]


def test_testimony_lineage_and_kit_sections_from_forks_are_those_computed_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    bc.run(EXAMPLES / "testimony_offline.yaml", run, limit=8)
    forked, here, answered_here = _metrics_both_ways(run, monkeypatch)
    # The lineage's child, then the kit's; then both computed here.
    assert answered_here == [False, False, True, True]
    assert forked == here
    assert here["lineage"]["by_judge"]  # type: ignore[index]


def test_a_child_whose_sections_need_the_store_leaves_them_to_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The dyad's kit sections read the events' meta, which a forked child may not read.
    run = tmp_path / "run"
    bc.run(EXAMPLES / "dyad.yaml", run, model="sim/population", limit=4)
    forked, here, answered_here = _metrics_both_ways(run, monkeypatch)
    assert answered_here == [True, True]
    assert forked == here
