"""The validity settings in every built-in paradigm, on `sim/population`: the off-the-record
probe follows each public turn of the speakers it asks (event contract of docs/validity.md), the
awareness probe is asked and judged at the end, and `estimate` counts every extra call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import backchannel as bc
from backchannel import orchestration
from backchannel.experiment import load_experiment
from backchannel.paradigms import get_paradigm
from backchannel.paradigms.peer_pressure import PeerPressureSettings
from backchannel.store import RunStore

POP = "sim/population"
VALIDITY = {"off_the_record": True, "awareness_probe": True, "awareness_model": POP}
DESIGNS: dict[str, dict[str, Any]] = {
    "peer_pressure": {
        "factors": {"k": [0, 1]},
        "settings": {
            "model": POP,
            "datasets": [{"name": "counterfact", "limit": 2}],
            "n_agents": 3,
            "rounds": 2,
            "judge": {"kind": "llm", "model": POP},
        },
    },
    "dyad": {
        "factors": {"style": ["manipulative", "plain"]},
        "settings": {"discussant_model": POP, "opponent_model": POP, "rounds": 2},
    },
    "testimony": {
        "items_limit": 2,
        "factors": {"intervention": ["none", "active_observers"]},
        "settings": {"model": POP, "rounds": ["Round R1. Share what you know."]},
    },
    "council": {
        "factors": {"pool": ["A", "B"], "delphi": ["none", "all_critiques"]},
        "settings": {
            "scenarios": ["housing"],
            "single_model": POP,
            "pool_models": [f"{POP}#a", f"{POP}#b"],
        },
    },
}
ORDER_CHECKS = {
    "peer_pressure": {"first_speaker", "last_speaker"},
    "dyad": set(),
    "testimony": {"first_option"},
    "council": {"first_option", "first_speaker", "last_speaker"},
}
# Which roles speak in public and are asked off the record.
ASKED = {
    "peer_pressure": {"honest"},
    "dyad": {"discussant", "opponent"},
    "testimony": None,
    "council": {"advocate"},
}


def _run(tmp_path: Path, paradigm: str, **extra: Any) -> tuple[Path, Path]:
    design = DESIGNS[paradigm]
    data = {
        "name": f"validity-{paradigm}",
        "paradigm": paradigm,
        "seed": 4,
        **{k: v for k, v in design.items() if k != "settings"},
        "settings": {**design["settings"], **VALIDITY, **extra},
        "population": {"awareness": {"aware": 0.3}},
    }
    path = tmp_path / f"{paradigm}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    run = tmp_path / "run"
    result = bc.run(path, run)
    assert result.counts["done"] == result.counts.get("total", sum(result.counts.values()))
    return path, run


def _decoded(frame: Any, column: str) -> list[Any]:
    return [json.loads(v) if isinstance(v, str) else v for v in frame[column]]


@pytest.mark.parametrize("paradigm", sorted(DESIGNS))
def test_off_the_record_and_awareness_follow_the_contract_and_the_estimate(
    tmp_path: Path, paradigm: str
) -> None:
    path, run = _run(tmp_path, paradigm)
    estimate = orchestration.plan(load_experiment(path)).estimate(only_todo=False)
    store = RunStore(run)
    try:
        tables = store.tables()
        calls = store.usage().total().calls
    finally:
        store.close()
    assert estimate["calls"] == calls
    events = tables.events_of()
    turns = events[
        (events["kind"] == "message") & (events["channel"] == "public") & (events["model"] != "")
    ]
    asked = ASKED[paradigm]
    if asked is not None:
        turns = turns[turns["role"].isin(asked)]
    probes = events[events["name"] == "off_the_record"]
    assert len(turns) and len(probes) == len(turns)
    assert set(probes["kind"]) == {"probe"} and set(probes["channel"]) == {"private"}
    metas = list(probes["meta"])
    by_turn = {
        (c, int(s)): (a, int(r))
        for c, s, a, r in zip(
            turns["conversation_id"], turns["seq"], turns["agent"], turns["round"], strict=True
        )
    }
    for conversation, agent, round_, meta in zip(
        probes["conversation_id"], probes["agent"], probes["round"], metas, strict=True
    ):
        assert by_turn.pop((conversation, int(meta["turn_seq"]))) == (agent, int(round_))
    assert not by_turn
    options = {
        str(c["conversation_id"]): c["meta"].get("options")
        for c in tables.done_conversations().to_dict(orient="records")
    }
    _values_parse_as_the_paradigms_probe(paradigm, probes, options)
    # The awareness probe: one per asked agent, each labelled by the awareness judge.
    aware = events[(events["name"] == "awareness") & (events["channel"] == "private")]
    assert len(aware)
    labels = tables.labels[tables.labels["judge"] == "awareness"]
    assert set(zip(labels["conversation_id"], labels["event_seq"], strict=True)) == set(
        zip(aware["conversation_id"], aware["seq"], strict=True)
    )
    assert set(labels["label"]) <= {"aware", "unaware"}
    # The metrics carry the validity section: awareness per cell, and the order checks the
    # paradigm declares (dyad declares none).
    validity = bc.open_run(run).metrics().validity
    assert validity is not None and validity.awareness
    assert sum(row.n_asked for row in validity.awareness) == len(aware)
    checks = {row.check for row in validity.order}
    assert checks == ORDER_CHECKS[paradigm]
    if not checks:
        assert validity.order_skipped


def _values_parse_as_the_paradigms_probe(
    paradigm: str, probes: Any, options: dict[str, list[str]]
) -> None:
    """Dyad: a 0-6 rating; testimony: a listed container or UNKNOWN; council: an option id;
    peer pressure: a free answer (judged like the main probe's)."""
    assert (probes["status"] == "ok").all()
    for conversation, value, text in zip(
        probes["conversation_id"], probes["value"], probes["text"], strict=True
    ):
        if paradigm == "dyad":
            assert isinstance(value, int) and 0 <= value <= 6
        elif paradigm == "testimony":
            assert value in [*options[conversation], "UNKNOWN"]
        elif paradigm == "council":
            assert value in options[conversation]
        else:
            assert text.strip()


def test_the_settings_are_shared_and_checked() -> None:
    for name in DESIGNS:
        fields = get_paradigm(name).Settings.model_fields
        assert {"off_the_record", "awareness_probe", "awareness_model"} <= set(fields)
    with pytest.raises(ValueError, match="awareness_model"):
        PeerPressureSettings.model_validate({"awareness_probe": True})
    settings = PeerPressureSettings.model_validate(VALIDITY)
    assert POP in get_paradigm("peer_pressure").models(settings)
