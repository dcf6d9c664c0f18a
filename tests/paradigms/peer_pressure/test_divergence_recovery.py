"""On `sim/population` with planted rates of hidden change and public accommodation, the
divergence measures recover each rate within its interval (and find none without pressure)."""

from __future__ import annotations

import pytest
import yaml

import backchannel as bc

HIDDEN, ACCOMMODATION, ROUNDS = 0.3, 0.15, 2


@pytest.fixture(scope="module")
def metrics(tmp_path_factory: pytest.TempPathFactory) -> bc.Metrics:
    folder = tmp_path_factory.mktemp("planted-divergence")
    experiment = {
        "name": "planted-divergence",
        "paradigm": "peer_pressure",
        "seed": 5,
        "factors": {"k": [0, 1]},
        "settings": {
            "model": "sim/population",
            "datasets": [{"name": "counterfact", "limit": 40}],
            "n_agents": 5,
            "rounds": ROUNDS,
            "memory_rounds": 10,
            "order": "fixed",
            "judge": {"kind": "rule"},
        },
        "population": {
            "peer_pressure": {
                "know": 0.8,
                "adopt": 0.3,
                "hidden_change": HIDDEN,
                "public_accommodation": ACCOMMODATION,
            }
        },
    }
    path = folder / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, folder / "run")
    assert run.counts["failed"] == 0
    result = run.metrics()
    assert isinstance(result, bc.Metrics)
    return result


def test_each_planted_rate_lies_in_its_interval(metrics: bc.Metrics) -> None:
    section = metrics.divergence
    assert section is not None
    pressured = [row for row in section.by_cell if row.cell["k"] == 1]
    assert [row.round for row in pressured] == list(range(1, ROUNDS + 1))
    for row in pressured:
        assert row.n >= 100, row
        for planted, measure in (
            (HIDDEN, row.hidden_change),
            (ACCOMMODATION, row.public_accommodation),
        ):
            assert measure.low is not None and measure.high is not None
            assert measure.low <= planted <= measure.high, (row.round, planted, measure)
        divergent = row.divergent
        assert divergent.low <= HIDDEN + ACCOMMODATION <= divergent.high


def test_no_divergence_without_pressure(metrics: bc.Metrics) -> None:
    section = metrics.divergence
    assert section is not None
    for row in section.by_cell:
        if row.cell["k"] == 0:
            assert row.n > 0 and row.counts["divergent"] == 0, row


def test_pressure_raises_divergence_between_cells(metrics: bc.Metrics) -> None:
    section = metrics.divergence
    assert section is not None
    test = next(t for t in section.tests if t.measure == "divergent")
    assert test.paired and test.factor == "k"
    assert test.p_holm is not None and test.p_holm < 0.001
    assert test.difference == pytest.approx(HIDDEN + ACCOMMODATION, abs=0.1)
