"""A full small council run on scripted models: the protocol's calls, isolation and estimate."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from backchannel.cli import app
from backchannel.cli._common import load_tables
from backchannel.paradigms.council import CouncilSettings, load_scenario
from backchannel.paradigms.council._prompts import REDACTED, template
from backchannel.paradigms.council._settings import DEFAULT_KEYWORDS

from . import _sim

SETTINGS = {
    "single_model": _sim.SINGLE,
    "pool_models": _sim.POOL,
    "verifier_model": _sim.VERIFIER,
    "scenarios": ["child_welfare"],
}


@pytest.fixture(autouse=True)
def scripted():
    _sim.install()
    yield
    _sim.uninstall()


def _run(tmp_path: Path, factors: dict, settings: dict | None = None, replicates: int = 1):
    experiment = {
        "name": "council-test",
        "paradigm": "council",
        "seed": 7,
        "replicates": replicates,
        "factors": factors,
        "settings": {**SETTINGS, **(settings or {})},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(experiment))
    runner = CliRunner()
    dry = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / "dry"), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    result = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    match = re.search(r"estimated calls: ([\d,]+)", dry.output)
    assert match, dry.output
    return tmp_path / "run", int(match.group(1).replace(",", ""))


def _values(frame):
    return [json.loads(v) if isinstance(v, str) else v for v in frame["value"]]


def test_full_run_events_metrics_and_report(tmp_path):
    run, dry = _run(tmp_path, {"pool": ["A", "B"]}, {"scenarios": ["child_welfare", "housing"]}, 2)
    tables = load_tables(run, None)
    conversations = tables.conversations
    assert len(conversations) == 8 and set(conversations["status"]) == {"done"}
    events = tables.events
    # 3 advocates x 3 rounds + 7 rankings + 7 verifications = 23 calls per conversation.
    assert len(events) == 8 * 23
    assert dry == 8 * 23  # the dry run's estimate equals the calls made
    for _, frame in events.groupby("conversation_id"):
        messages = frame[frame["kind"] == "message"]
        assert list(messages["name"]) == ["position"] * 3 + ["critique"] * 3 + ["rebuttal"] * 3
        assert list(messages["round"]) == [1] * 3 + [2] * 3 + [3] * 3
        assert set(messages["role"]) == {"advocate"} and set(messages["channel"]) == {"public"}
        rankings = frame[frame["kind"] == "ranking"]
        assert len(rankings) == 7 and set(rankings["channel"]) == {"private"}
        assert all(set(v) == {"ranking", "rationale"} for v in _values(rankings))
        scores = frame[(frame["kind"] == "score") & (frame["name"] == "verification")]
        assert len(scores) == 7 and all(v in (0.3, 0.9) for v in _values(scores))
        assert set(scores["model"]) == {_sim.VERIFIER}
    pool_a = conversations[conversations["pool"] == "A"]["conversation_id"]
    in_a = events[events["conversation_id"].isin(pool_a) & (events["role"] != "verifier")]
    assert set(in_a["model"]) == {_sim.SINGLE}
    in_b = events[~events["conversation_id"].isin(pool_a) & (events["role"] == "evaluator")]
    assert set(in_b["model"]) == set(_sim.POOL)

    metrics = json.loads(CliRunner().invoke(app, ["metrics", str(run), "--json"]).output)
    states = {(g["scenario"], g["state"]) for g in metrics["groups"]}
    assert states == {(s, x) for s in ("child_welfare", "housing") for x in "ABC"}
    assert len(metrics["tests"]) == 2 * 5
    report = CliRunner().invoke(app, ["report", str(run)])
    assert report.exit_code == 0, report.output
    html = (run / "report" / "report.html").read_text()
    assert "Concentration and margin" in html and "Tension classes" in html
    assert '<figure><div class="plot"' in html and "<svg" in html
    # Winners and verification scores read across: one column per option and per value.
    winners = pd.read_csv(run / "report" / "winners.csv")
    keys = ["scenario", "delphi", "state"]
    options = {o for s in ("child_welfare", "housing") for o in load_scenario(s).option_ids}
    assert set(winners.columns) - set(keys) <= options | {"tie"}
    assert len(winners) == 2 * 3  # two scenarios x states A, B, C
    assert (winners.drop(columns=keys).sum(axis=1) == 2).all()  # two deliberations each
    consistency = pd.read_csv(run / "report" / "consistency.csv")
    assert set(CouncilSettings().roster) <= set(consistency.columns)


def test_advocates_see_no_message_of_their_own_round(tmp_path):
    run, _ = _run(tmp_path, {"pool": ["A"]})
    events = load_tables(run, None).events
    messages = events[events["kind"] == "message"]
    texts = {r: list(messages[messages["round"] == r]["text"]) for r in (1, 2, 3)}
    advocate_requests = [
        r for r in _sim.captured if r.constraint is None and "advocate" in r.messages[0].content
    ]
    assert len(advocate_requests) == 9
    for request in advocate_requests:
        prompt = "\n".join(m.content for m in request.messages)
        round_number = 1 if "Round 1 of 3" in prompt else 2 if "Round 2 of 3" in prompt else 3
        for earlier in range(1, round_number):
            assert all(t in prompt for t in texts[earlier])
        for later in range(round_number, 4):
            assert not any(t in prompt for t in texts[later])


def test_evaluators_read_the_debate_but_no_other_evaluator(tmp_path):
    run, _ = _run(tmp_path, {"pool": ["A"]})
    events = load_tables(run, None).events
    debate = list(events[events["kind"] == "message"]["text"])
    rationales = [v["rationale"] for v in _values(events[events["kind"] == "ranking"])]
    requests = [r for r in _sim.captured if getattr(r.constraint, "name", "") == "ranking"]
    assert len(requests) == 7
    for request in requests:
        prompt = "\n".join(m.content for m in request.messages)
        assert all(text in prompt for text in debate)
        assert not any(rationale in prompt for rationale in rationales)


def test_verifier_gets_only_value_definition_and_rationale(tmp_path):
    run, _ = _run(tmp_path, {"pool": ["A"]})
    tables = load_tables(run, None)
    events = tables.events
    scenario = load_scenario("child_welfare")
    rankings = events[events["kind"] == "ranking"]
    by_evaluator = dict(zip(rankings["agent"], _values(rankings), strict=True))
    debate = list(events[events["kind"] == "message"]["text"])
    requests = [r for r in _sim.captured if r.model == _sim.VERIFIER]
    assert len(requests) == 7
    scores = events[events["kind"] == "score"]
    metas = [json.loads(m) for m in scores["meta"]]
    from backchannel.paradigms.council import CouncilSettings

    values = CouncilSettings().values
    for request, meta in zip(requests_in_order(requests, metas), metas, strict=True):
        (message,) = request.messages
        own = by_evaluator[meta["evaluator"]]
        first = own["ranking"][0]
        # The rationale names the first option by id and name; both are redacted.
        redacted = own["rationale"].replace(
            f"{first} ({scenario.option(first).name})", f"{REDACTED} ({REDACTED})"
        )
        value = values[meta["value"]]
        expected = template("verify.txt").format(
            value_name=value.name, value_definition=value.definition, rationale=redacted
        )
        assert message.content.startswith(expected)  # the client appends one format sentence
        prompt = message.content
        for option in scenario.options:
            assert option.id not in prompt and option.name.lower() not in prompt.lower()
        assert not any(text in prompt for text in debate)
        others = [v["rationale"] for k, v in by_evaluator.items() if k != meta["evaluator"]]
        assert not any(o.split("Note ")[1] in prompt for o in others)
        assert json.dumps(own["ranking"]) not in prompt


def requests_in_order(requests, metas):
    """Match each stored score to the verifier request holding its evaluator's value."""
    out = []
    for meta in metas:
        (match,) = [r for r in requests if f"Value: {meta['value']}\n" in r.messages[0].content]
        out.append(match)
    return out


@pytest.mark.parametrize(
    ("variant", "revisions"),
    [
        ("all_critiques", 7),
        ("partner_critique", 6),  # fairness, the seventh value, has no tension partner
        ("self_check", 7),
    ],
)
def test_delphi_variants_revise_and_estimate_matches(tmp_path, variant, revisions):
    run, dry = _run(tmp_path, {"pool": ["A"], "delphi": [variant]})
    events = load_tables(run, None).events
    revised = events[(events["kind"] == "ranking") & (events["name"] == "revised")]
    assert len(revised) == revisions
    assert dry == 23 + revisions == len(events)
    rationales = dict(
        zip(
            events[(events["kind"] == "ranking") & (events["name"] == "ranking")]["agent"],
            [v["rationale"] for v in _values(events[events["name"] == "ranking"])],
            strict=True,
        )
    )
    requests = [
        r
        for r in _sim.captured
        if getattr(r.constraint, "name", "") == "ranking" and len(r.messages) == 4
    ]
    assert len(requests) == revisions
    for request in requests:
        feedback = request.messages[-1].content
        shown = [name for name, text in rationales.items() if text in feedback]
        own = request.messages[2].content
        assert own not in feedback
        expected = {"all_critiques": 6, "partner_critique": 1, "self_check": 0}[variant]
        assert len(shown) == expected


def test_profiling_assigns_each_value_its_best_model(tmp_path):
    run, dry = _run(tmp_path, {"pool": ["B"]}, {"profiling": True})
    tables = load_tables(run, None)
    meta = json.loads(tables.conversations["meta"].iloc[0])
    assignment = meta["assignment"]
    # p1 writes safety words, p2 creativity words, p3 pragmatism words; values no text
    # matches tie at 0 and go to the first pool model.
    assert assignment["safety"] == "sim/council_p1"
    assert assignment["creativity"] == "sim/council_p2"
    assert assignment["pragmatism"] == "sim/council_p3"
    assert assignment["simplicity"] == "sim/council_p1"
    events = tables.events
    profile = events[events["name"] == "profile"]
    assert len(profile) == 3 * 7
    evaluators = events[events["kind"] == "ranking"]
    models = dict(zip(evaluators["agent"], evaluators["model"], strict=True))
    assert models["evaluator_creativity"] == "sim/council_p2"
    assert dry == 23 + 21 == len(events)
    assert meta["profiling_collapsed"] is False


def test_profiling_that_gives_every_value_one_model_is_said_and_can_be_avoided(tmp_path):
    # Only p1 writes keywords of every value: every evaluator would run on p1.
    everything = " ".join(k for words in DEFAULT_KEYWORDS.values() for k in words)
    original = dict(_sim.PROFILE_TEXT)
    plain = "Nothing in particular."
    _sim.PROFILE_TEXT.update(
        {"sim/council_p1": everything, "sim/council_p2": plain, "sim/council_p3": plain}
    )
    (tmp_path / "same").mkdir()
    (tmp_path / "distinct").mkdir()
    try:
        run, _ = _run(tmp_path / "same", {"pool": ["B"]}, {"profiling": True})
        metrics = json.loads(CliRunner().invoke(app, ["metrics", str(run), "--json"]).output)
        assert metrics["profiling"] == {"profiled": 1, "collapsed": 1}
        report = CliRunner().invoke(app, ["report", str(run)])
        assert report.exit_code == 0, report.output
        html = (run / "report" / "report.html").read_text()
        assert "state A in all but name" in html
        distinct, _ = _run(
            tmp_path / "distinct", {"pool": ["B"]}, {"profiling": True, "profiling_distinct": True}
        )
        meta = json.loads(load_tables(distinct, None).conversations["meta"].iloc[0])
        assert len(set(meta["assignment"].values())) == 3
        assert meta["profiling_collapsed"] is False
    finally:
        _sim.PROFILE_TEXT.clear()
        _sim.PROFILE_TEXT.update(original)


def test_delphi_chosen_in_settings_is_measured_as_that_variant(tmp_path):
    # No `delphi` factor: the setting chooses the variant, and metrics must still report the
    # self_check group with its revisions (7 evaluators revise once each).
    run, _ = _run(tmp_path, {"pool": ["A"]}, {"delphi": "self_check"})
    metrics = json.loads(CliRunner().invoke(app, ["metrics", str(run), "--json"]).output)
    (group,) = metrics["groups"]
    assert group["delphi"] == "self_check"
    assert group["revisions"]["revised_total"] == 7


def test_estimate_per_model_is_exact_for_every_replicate_of_pool_b(tmp_path):
    # Pool p1, p2, p3; role i gets pool[(i + replicate) % 3]. Replicate 1: advocates p2, p3,
    # p1 (3 calls each); evaluators p2 p3 p1 p2 p3 p1 p2 -> p1 3 + 2 = 5, p2 3 + 3 = 6,
    # p3 3 + 2 = 5; the verifier 7. (Replicate 0 gives p1 6, p2 5, p3 5.)
    from backchannel.engine import Item
    from backchannel.paradigms.council import Council, CouncilSettings

    run, _ = _run(tmp_path, {"pool": ["B"]}, replicates=2)
    tables = load_tables(run, None)
    settings = CouncilSettings(**SETTINGS, pool="B")
    item = Item("child_welfare", load_scenario("child_welfare").as_dict())
    for _, conversation in tables.conversations.iterrows():
        events = tables.events[tables.events["conversation_id"] == conversation["conversation_id"]]
        made = events["model"].astype("str").value_counts().to_dict()  # only those it called
        estimate = Council().estimate(settings, item, int(conversation["replicate"]))
        assert estimate.calls == made
    p1, p2, p3 = _sim.POOL
    assert Council().estimate(settings, item, 1).calls == {
        p1: 5,
        p2: 6,
        p3: 5,
        _sim.VERIFIER: 7,
    }


def test_a_model_argued_judge_reads_every_turn_and_the_estimate_counts_its_calls(tmp_path):
    from backchannel.engine import Item
    from backchannel.paradigms import get_paradigm
    from backchannel.paradigms._base import AnalysisOptions
    from backchannel.paradigms.council import Council
    from backchannel.paradigms.council._stances import LABEL_FAILED

    judged = {"argued_judge": _sim.JUDGE, "off_the_record": True}
    run, dry = _run(tmp_path, {"pool": ["A", "B"]}, judged, replicates=2)
    tables = load_tables(run, None)
    labels = tables.labels_for("argued")
    # 4 conversations x 3 advocates x 3 rounds, each turn read once by the model judge.
    assert len(labels) == 4 * 9 and set(labels["model"]) == {_sim.JUDGE}
    assert dry == len(tables.events) + len(labels)  # the estimate counts the judge's calls
    settings_a = CouncilSettings(**SETTINGS, **judged)
    item = Item("child_welfare", load_scenario("child_welfare").as_dict())
    for conversation in tables.conversations.to_dict("records"):
        cid = conversation["conversation_id"]
        # `model` is categorical: counted as text, only the models this conversation called.
        made = tables.events[tables.events["conversation_id"] == cid]["model"]
        made = made.astype("str").value_counts()
        judge = labels[labels["conversation_id"] == cid]["model"].astype("str").value_counts()
        calls = made.add(judge, fill_value=0)
        settings = settings_a.model_copy(update={"pool": conversation["pool"]})
        estimate = Council().estimate(settings, item, int(conversation["replicate"]))
        assert estimate.calls == calls.astype(int).to_dict()
        assert estimate.calls[_sim.JUDGE] == 9
    # The judge reads the turn's text and the options, never the speaker's assigned option.
    asked = [r for r in _sim.captured if r.model == _sim.JUDGE and r.attempt == 0]
    assert len(asked) == 4 * 9
    assert all("advocate_" not in r.messages[-1].content for r in asked)
    # A verdict outside the label set is stored as failed, and its pair skipped with the
    # reason; every ok label is one of the task's labels.
    ok = labels[labels["status"] == "ok"]
    failed = labels[labels["status"] != "ok"]
    options = set(load_scenario("child_welfare").option_ids)
    assert set(ok["label"]) <= options | {"none", "several"}
    assert len(failed) > 0 and set(failed["text"]) == {"perhaps"}
    pairs = get_paradigm("council").stance_pairs(tables, AnalysisOptions())
    reasons = pairs["skipped"].dropna()
    statuses = set(failed["status"])
    assert sum(reasons.isin([LABEL_FAILED.format(status=s) for s in statuses])) == len(failed)
    argued = ok[ok["label"].isin(options)]
    assert int(pairs["skipped"].isna().sum()) == len(argued)


def test_without_an_argued_judge_no_turn_is_labelled_and_every_pair_says_so(tmp_path):
    from backchannel.paradigms import get_paradigm
    from backchannel.paradigms._base import AnalysisOptions
    from backchannel.paradigms.council._stances import NO_LABEL

    run, dry = _run(tmp_path, {"pool": ["A"]}, {"argued_judge": None, "off_the_record": True})
    tables = load_tables(run, None)
    assert tables.labels_for("argued").empty
    assert dry == len(tables.events) == 3 * 3 * 2 + 7 + 7  # turns, their probes, ranks, scores
    pairs = get_paradigm("council").stance_pairs(tables, AnalysisOptions())
    # Every turn has a readable off-the-record choice: the missing label is the only reason.
    assert len(pairs) == 9 and (pairs["skipped"] == NO_LABEL).all()


def test_profiling_calls_share_one_run_level_seed_across_conversations(tmp_path):
    # Two scenarios -> two conversations; each (model, value) profile request is the same in
    # both, with the seed derived from the experiment seed (7), so the cache can answer it.
    from backchannel.seeding import derive_seed

    run, _ = _run(
        tmp_path, {"pool": ["B"]}, {"profiling": True, "scenarios": ["child_welfare", "housing"]}
    )
    events = load_tables(run, None).events
    assert (events["name"] == "profile").sum() == 2 * 3 * 7  # stored in both conversations
    # Requests that reached the model (a cache hit never does): at most one per conversation.
    profile = [r for r in _sim.captured if "one-time grant" in r.messages[-1].content]
    assert 3 * 7 <= len(profile) <= 2 * 3 * 7
    by_call: dict[tuple[str, str], set] = {}
    for request in profile:
        value = re.search(r"Value: (\w+)\n", request.messages[0].content).group(1)
        assert request.seed == derive_seed(7, "council-profile", request.model, value)
        by_call.setdefault((request.model, value), set()).add((request.seed, request.messages))
    assert len(by_call) == 3 * 7 and all(len(v) == 1 for v in by_call.values())
