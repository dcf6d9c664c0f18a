"""The whole pipeline against known answers: runs of `sim/population` with planted parameters,
whose metrics must recover those parameters within their intervals."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from statsmodels.stats.proportion import proportion_confint

import backchannel as bc
from backchannel.paradigms.council._extract import deliberations
from backchannel.paradigms.council._metrics import score_table
from backchannel.paradigms.dyad import DyadMetrics


def _run(tmp_path: Path, experiment: dict[str, Any]) -> Any:
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, tmp_path / "run")
    assert run.counts["failed"] == 0 and run.counts["incomplete"] == 0
    return run


def _wilson_covers(planted: float, count: int, n: int) -> bool:
    low, high = proportion_confint(count, n, alpha=0.05, method="wilson")
    return bool(low <= planted <= high)


ADOPT, ROUNDS = 0.2, 2
ENDORSE, HEDGE, REJECT = 0.5, 0.4, 0.7


def test_peer_pressure_recovers_adoption_and_expression(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        {
            "name": "planted-peer-pressure",
            "paradigm": "peer_pressure",
            "seed": 11,
            "factors": {"k": [0, 1, 3]},
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
                    "know": 1.0,
                    "adopt": ADOPT,
                    "peer_weight": 0.0,
                    "endorse": ENDORSE,
                    "hedge": HEDGE,
                    "reject": REJECT,
                    "performative": 0.0,
                }
            },
        },
    )
    metrics = run.metrics()
    by_k = {row["k"]: row for row in metrics["fpi"]["by_cell"]}
    # Exposure after the last round is k adversary messages per round, all remembered.
    for k, row in by_k.items():
        planted = 1 - (1 - ADOPT) ** (k * ROUNDS)
        assert row["fpi_low"] <= planted <= row["fpi_high"], (k, planted, row)
        assert row["initial"] == 0.0
    assert by_k[0]["fpi"] < by_k[1]["fpi"] < by_k[3]["fpi"]
    # The last honest speaker of a round (adversaries speak first) believes at its turn what
    # it answers after the round, so its stance follows the expression rule exactly.
    last = metrics["pairings"]["last_after"]
    counts = last["infected_stance_counts"]
    infected = sum(counts.values())
    assert infected > 30
    planted_shares = {
        "endorse": ENDORSE,
        "hedge": (1 - ENDORSE) * HEDGE,
        "ignore": (1 - ENDORSE) * (1 - HEDGE),
    }
    for stance, share in planted_shares.items():
        assert _wilson_covers(share, counts[stance], infected), (stance, counts)
    hidden = counts["hedge"] + counts["ignore"]
    assert _wilson_covers(1 - ENDORSE, hidden, infected)
    knowers = last["n_knower_turns"]
    corrected = round(last["knower_correction_rate"] * knowers)
    assert knowers > 30 and _wilson_covers(REJECT, corrected, knowers)


def _dyad_shift(d: float, o: float, rate_d: float, rate_o: float, rounds: int) -> float:
    """The Discussant's expected shift: it cannot move in round 1 (no argument to answer yet)."""
    start = d
    for r in range(1, rounds + 1):
        if r > 1:
            d += rate_d * (o - d)
        o += rate_o * (d - o)
    return d - start


def test_dyad_recovers_the_planted_movement_rates(tmp_path: Path) -> None:
    rates = {"open": 0.3, "firm": 0.05}
    rounds = 4
    run = _run(
        tmp_path,
        {
            "name": "planted-dyad",
            "paradigm": "dyad",
            "seed": 5,
            "replicates": 60,
            "factors": {"discussant_model": [f"sim/population#{m}" for m in rates]},
            "settings": {
                "opponent_model": "sim/population#firm",
                "stance": "human",
                "style": "plain",
                "wording": "first",
                "rounds": rounds,
            },
            "population": {
                "dyad": {
                    "opponent_rate": 0.1,
                    "discussant_start": 3.0,
                    "stance_strength": 2.5,
                    "start_spread": 0.0,
                },
                "models": {m: {"dyad": {"discussant_rate": r}} for m, r in rates.items()},
            },
        },
    )
    metrics = run.metrics()
    assert isinstance(metrics, DyadMetrics)
    by_pairing = {row.pairing: row for row in metrics.shifts.by_pairing}
    estimates = {}
    for model, rate in rates.items():
        shift = by_pairing[f"sim/population#{model} vs sim/population#firm"].shift_discussant
        planted = _dyad_shift(3.0, 5.5, rate, 0.1, rounds)
        assert shift.low is not None and shift.high is not None
        assert shift.low <= planted <= shift.high, (model, planted, shift)
        estimates[model] = shift.estimate
    assert estimates["open"] > estimates["firm"] > 0
    # The tags follow the movement: the open Discussant accepts more often.
    categories = {row.pairing: row for row in metrics.categories.discussant.by_pairing}
    accept = {
        m: categories[f"sim/population#{m} vs sim/population#firm"].ACCEPT.estimate for m in rates
    }
    assert accept["open"] > accept["firm"]


def test_council_recovers_affinities_and_faithfulness(tmp_path: Path) -> None:
    affinity = {"rent_control": 1.5, "deregulation": -1.0, "public_housing": 0.0}
    faithfulness = 0.6
    run = _run(
        tmp_path,
        {
            "name": "planted-council",
            "paradigm": "council",
            "seed": 3,
            "replicates": 40,
            "factors": {"pool": ["A"]},
            "settings": {
                "scenarios": ["housing"],
                "single_model": "sim/population",
                "verifier_model": "sim/population",
                "verify": True,
                "profiling": False,
            },
            "population": {
                "council": {"affinities": {"safety": affinity}, "faithfulness": faithfulness}
            },
        },
    )
    scores = score_table(deliberations(run.tables))
    safety = scores[scores["value"] == "safety"]
    weights = {o: math.exp(a) for o, a in affinity.items()}
    total = sum(weights.values())
    for option, weight in weights.items():
        chosen = int((safety["first_choice"] == option).sum())
        assert _wilson_covers(weight / total, chosen, len(safety)), (option, chosen)
    # Another value has no affinities: its first choices are uniform.
    other = scores[scores["value"] == "pragmatism"]
    assert _wilson_covers(1 / 3, int((other["first_choice"] == "rent_control").sum()), len(other))
    # The verifier scores the share of faithful sentences: its mean is the planted rate.
    values = scores["score"].dropna().to_numpy()
    half = 1.96 * values.std(ddof=1) / np.sqrt(len(values))
    assert abs(values.mean() - faithfulness) <= half


@pytest.mark.parametrize("example", ["dyad.yaml", "council_housing.yaml"])
def test_model_sim_keeps_distinct_models_distinct(example: str) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    loaded = bc.load_experiment(examples / example, model="sim/population")
    resolved = loaded.resolved()
    if example == "dyad.yaml":
        assert resolved["factors"]["discussant_model"] == [
            "sim/population#llama-3.1-8b-instruct",
            "sim/population#qwen2.5-7b-instruct",
        ]
    else:
        assert len(set(resolved["settings"]["pool_models"])) == 7
        assert resolved["settings"]["verifier_model"] == "sim/population#qwen2.5-7b-instruct"
