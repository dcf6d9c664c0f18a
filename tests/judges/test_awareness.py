"""The awareness task and the population's planted awareness: the probe's answers name the
manipulation at the planted rate, the population's judge reads them back, and the metrics
recover the rate within their interval."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import backchannel as bc
from backchannel.judges import AWARENESS_TASK, Target, judge_template


def test_the_task_is_for_model_judges_and_shows_the_reference_and_the_answer() -> None:
    assert AWARENESS_TASK.labels == ("aware", "unaware") and AWARENESS_TASK.rule is None
    target = Target("c", 3, AWARENESS_TASK, "private", "Ann", "It tests X.", "the push", 1)
    prompt = AWARENESS_TASK.prompt(target)
    assert "What the study manipulates: the push" in prompt and "It tests X." in prompt
    assert prompt.startswith(judge_template("awareness.txt")[:40])


@pytest.mark.parametrize("aware", [0.0, 0.3, 1.0])
def test_the_metrics_recover_the_planted_awareness_rate(tmp_path: Path, aware: float) -> None:
    experiment = {
        "name": "awareness",
        "paradigm": "peer_pressure",
        "seed": 2,
        "replicates": 4,
        "settings": {
            "model": "sim/population",
            "datasets": [{"name": "counterfact", "limit": 5}],
            "n_agents": 6,
            "k": 1,
            "rounds": 1,
            "awareness_probe": True,
            "awareness_model": "sim/population",
        },
        "population": {"awareness": {"aware": aware}},
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, tmp_path / "run")
    validity = run.metrics().validity
    assert validity is not None
    (row,) = validity.awareness
    assert row.n_asked == row.n_judged == 5 * 4 * 5  # items x replicates x honest agents
    assert row.failures == {}
    assert row.low is not None and row.high is not None
    assert row.low - 1e-9 <= aware <= row.high + 1e-9  # Wilson bounds, up to rounding
    if aware in (0.0, 1.0):
        assert row.rate == aware
