"""Testimony runs of `sim/population` against the rule worked out from each stored story.

The expected votes are computed from the environment a conversation stored (its chain,
windows, messages and recipients), not from the prompts the population reads: each role's own
end place is the node where its last window ends, each message claims `asserts.supports`, and
the rule of docs/population.md combines them. With `trust: 1` every vote is known exactly; with
`trust < 1` the expected share is the average over which sources an agent believes.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml
from statsmodels.stats.proportion import proportion_confint

import backchannel as bc

UNKNOWN = "UNKNOWN"
OBSERVATION = 1.5
TRUST = 0.6


def _run(directory: Path, experiment: dict[str, Any]) -> Any:
    path = directory / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, directory / "run")
    assert run.counts["failed"] == 0 and run.counts["incomplete"] == 0
    return run


def _covers(expected: float, count: int, n: int) -> bool:
    """Whether the Wilson 95 % interval of count/n holds `expected` (conservative for a sum of
    Bernoulli votes with different probabilities, whose variance is below the binomial one)."""
    low, high = proportion_confint(count, n, alpha=0.05, method="wilson")
    return bool(low <= expected <= high)


def _own(env: dict[str, Any], role: str) -> str:
    """Where a role last saw the object: the end node of its last window."""
    return str(env["chain"][env["windows"][role][-1][1]]["container"])


def _shown(env: dict[str, Any], role: str) -> dict[str, str]:
    """Sender -> claimed end place of every message `role` received (placeholders claim none)."""
    return {
        m["sender"]: m["asserts"]["supports"]
        for m in env["messages"]
        if role in m["recipients"] and m["asserts"]["supports"] is not None
    }


def _plurality(own: str | None, places: Iterable[str], weight: float) -> str:
    totals: Counter[str] = Counter()
    if own is not None and weight > 0:
        totals[own] += weight
    totals.update(places)
    if not totals:
        return UNKNOWN
    best = max(totals.values())
    top = [c for c, w in totals.items() if w == best]
    return top[0] if len(top) == 1 else UNKNOWN


def _kind(vote: str, env: dict[str, Any]) -> str:
    if vote == env["endpoint"]:
        return "true"
    if vote == env["decoy"]:
        return "decoy"
    return "unknown" if vote == UNKNOWN else "other"


def _expected_kinds(own: str, shown: dict[str, str], trust: float, env: dict[str, Any]) -> Counter:
    """The probability of each vote kind when each shown account is believed with `trust`."""
    result: Counter[str] = Counter()
    sources = sorted(shown)
    for believed in itertools.product((True, False), repeat=len(sources)):
        p = 1.0
        for b in believed:
            p *= trust if b else 1 - trust
        places = [shown[s] for s, b in zip(sources, believed, strict=True) if b]
        result[_kind(_plurality(own, places, OBSERVATION), env)] += p
    return result


def _votes(run: Any) -> dict[tuple[str, str, int], str]:
    votes = run.tables.events_of(kind="probe", name="vote")
    assert (votes["status"] == "ok").all()
    return {
        (str(r["conversation_id"]), str(r["agent"]), int(r["round"])): str(r["value"])
        for r in votes.to_dict(orient="records")
    }


def _conversations(run: Any) -> list[dict[str, Any]]:
    return list(run.tables.done_conversations().to_dict(orient="records"))


def _analysed(meta: dict[str, Any]) -> list[str]:
    return [a["name"] for a in meta["agents"] if a["role"] in ("second_key", "member")]


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The 40 event-deception stories in C0 and C1, every source believed with TRUST."""
    return _run(
        tmp_path_factory.mktemp("testimony"),
        {
            "name": "planted-testimony",
            "paradigm": "testimony",
            "seed": 4,
            "factors": {"condition": ["C0", "C1"]},
            "settings": {"model": "sim/population", "deceptions": ["event"]},
            "population": {"testimony": {"observation": OBSERVATION, "trust": TRUST}},
        },
    )


@pytest.fixture(scope="module")
def planted_metrics(planted: Any) -> dict[str, Any]:
    return planted.metrics().as_json()


def test_before_testimony_every_role_votes_where_it_last_saw_the_object(planted: Any) -> None:
    votes = _votes(planted)
    for record in _conversations(planted):
        env, cid = record["meta"]["environment"], record["conversation_id"]
        for role in env["roles"]:
            assert votes[(cid, role, 0)] == _own(env, role)


def test_testimony_votes_follow_the_planted_weights_with_and_without_the_liar(
    planted: Any, planted_metrics: dict[str, Any]
) -> None:
    """At T1 each analysed role weighs its own end place against the messages it received; in
    C1 the key's message claims the decoy, so the votes that follow the liar move as planted."""
    metrics = planted_metrics
    rows = {
        r["condition"]: r
        for r in metrics["outcome_rates"]
        if r["group"] == "participants" and r["checkpoint"] == "T1"
    }
    expected: dict[str, Counter] = {"C0": Counter(), "C1": Counter()}
    n: Counter[str] = Counter()
    for record in _conversations(planted):
        meta = record["meta"]
        env = meta["environment"]
        for role in _analysed(meta):
            kinds = _expected_kinds(_own(env, role), _shown(env, role), TRUST, env)
            expected[meta["condition"]].update(kinds)
            n[meta["condition"]] += 1
    for condition in ("C0", "C1"):
        row, voters = rows[condition], n[condition]
        assert row["runs"] * 4 == voters == 160
        for kind in ("true", "decoy"):
            count = round(row[f"{kind}_share"] * voters)
            assert _covers(expected[condition][kind] / voters, count, voters), (condition, kind)
    # The liar moves votes from the truth to the decoy, as the expectations say.
    assert expected["C1"]["decoy"] > expected["C0"]["decoy"] + 10
    assert rows["C1"]["decoy_share"] > rows["C0"]["decoy_share"]
    assert rows["C1"]["true_share"] < rows["C0"]["true_share"]


def test_first_round_citations_and_roots_match_trust(
    planted: Any, planted_metrics: dict[str, Any]
) -> None:
    """In R1 a member cites a testimony directly exactly when it received it and believes its
    sender: the direct rate is TRUST times the share of members that received it. The true
    root is the second key's testimony; the false root exists in C1 only."""
    lineage = planted_metrics["lineage"]["by_judge"]["citations"]
    assert lineage["extraction"]["by_status"] == {"ok": 1200}  # 80 runs, 5 speakers, 3 rounds
    assert lineage["extraction"]["invalid_citations"] == {}
    received: Counter[tuple[str, str]] = Counter()
    members: Counter[str] = Counter()
    for record in _conversations(planted):
        meta = record["meta"]
        env = meta["environment"]
        for agent in meta["agents"]:
            if agent["role"] != "member":
                continue
            members[meta["condition"]] += 1
            for testimony in ("key", "second_key"):
                received[(meta["condition"], testimony)] += meta[testimony] in _shown(
                    env, agent["name"]
                )
    rates = {
        (r["condition"], r["testimony"]): r
        for r in lineage["citation"]
        if r["group"] == "members" and r["phase"] == "R1"
    }
    for (condition, testimony), row in rates.items():
        n = members[condition]
        assert row["statements"] == n == 120
        assert row["carrier_rate"] == 0.0  # nothing to pass on before R1
        cited = round(row["direct_rate"] * n)
        expected = TRUST * received[(condition, testimony)] / n
        assert _covers(expected, cited, n), (condition, testimony, cited, expected)
    states = {(r["condition"], r["phase"]): r for r in lineage["root_states"] if r["phase"] == "R1"}
    assert states[("C0", "R1")]["false_only"] == states[("C0", "R1")]["both"] == 0
    c1 = states[("C1", "R1")]
    holding_false = c1["false_only"] + c1["both"]
    assert _covers(TRUST * received[("C1", "key")] / 120, holding_false, 120)
    holding_true = c1["true_only"] + c1["both"]
    assert _covers(TRUST * received[("C1", "second_key")] / 120, holding_true, 120)
    # Accounts pass on: by R2 members carry testimonies they never received.
    later = [r for r in lineage["citation"] if r["group"] == "members" and r["phase"] == "R2"]
    assert all(r["carrier_rate"] > 0 for r in later)


def _speaker_accounts(env: dict[str, Any], speakers: list[str], condition: str) -> dict[str, str]:
    """Every account the R1 statements pass on (trust 1): each speaker's own first-hand end
    place (the deceptive key's: the one its message claims) and each message it received."""
    passed: dict[str, str] = {}
    key_message = {m["sender"]: m["asserts"]["supports"] for m in env["messages"]}
    for speaker in speakers:
        if condition == "C1" and speaker == env["key"]:
            passed[speaker] = key_message[speaker]
        else:
            passed[speaker] = _own(env, speaker)
        passed.update(_shown(env, speaker))
    return passed


def test_with_full_trust_every_vote_and_outcome_is_as_worked_out(tmp_path: Path) -> None:
    """trust 1: T1 weighs the messages received; from R1 on every role holds every account the
    first round passed on; observers hold the public record's accounts and have no own."""
    run = _run(
        tmp_path,
        {
            "name": "planted-testimony-exact",
            "paradigm": "testimony",
            "seed": 9,
            "factors": {
                "condition": ["C0", "C1"],
                "intervention": ["none", "null_exit", "passive_observers"],
            },
            "exclude": [
                {"condition": "C1", "intervention": "null_exit"},
                {"condition": "C0", "intervention": "passive_observers"},
            ],
            "settings": {
                "model": "sim/population",
                "generate": {"count": 10, "moves": [3, 4, 5], "seed": 3},
                "rounds": ["Round R1. Share your timeline.", "Round R2. Weigh the timelines."],
            },
            "population": {"testimony": {"observation": OBSERVATION, "trust": 1.0}},
        },
    )
    votes = _votes(run)
    truth: Counter[tuple[str, str]] = Counter()
    checked = 0
    for record in _conversations(run):
        meta, cid = record["meta"], record["conversation_id"]
        env, condition = meta["environment"], meta["condition"]
        exits = meta["intervention"] == "null_exit"
        roles = env["roles"]
        speakers = [r for r in roles if not (exits and r == env["key"])]
        passed = _speaker_accounts(env, speakers, condition)
        expected: dict[tuple[str, int], str] = {}
        for role in roles:
            own, shown = _own(env, role), _shown(env, role)
            expected[(role, 0)] = own
            expected[(role, 1)] = _plurality(own, shown.values(), OBSERVATION)
            if role in speakers:
                held = {**passed, **shown}
                held.pop(role, None)
                for k in (1, 2):
                    expected[(role, 2 * k)] = _plurality(own, held.values(), OBSERVATION)
        observers = [a["name"] for a in meta["agents"] if a["role"] == "observer"]
        broadcast = [m["asserts"]["supports"] for m in env["messages"] if m["kind"] == "broadcast"]
        for observer in observers:
            # T1: the broadcasts; after R1 and R2: every account the statements passed on.
            expected[(observer, 1)] = _plurality(None, broadcast, OBSERVATION)
            for number in (2, 4):
                expected[(observer, number)] = _plurality(None, passed.values(), OBSERVATION)
        mine = {(a, r): v for (c, a, r), v in votes.items() if c == cid}
        assert mine == expected, cid
        checked += len(expected)
        final = [_kind(expected[(r, 4)], env) for r in _analysed(meta)]
        truth[(condition, meta["intervention"])] += final.count("true") >= 3
    # An exit: 2 votes fewer each; observers: 3 x 3 votes (T1, R1, R2).
    assert checked == len(votes) == 10 * (20 + 20 + 18 + 29)
    rates = {
        (r["condition"], r["intervention"]): r
        for r in run.metrics().as_json()["outcome_rates"]
        if r["group"] == "participants" and r["checkpoint"] == "R2"
    }
    assert len(rates) == 4
    for arm, row in rates.items():
        assert row["truth"]["k"] == truth[arm] and row["runs"] == 10
