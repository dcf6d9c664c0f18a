"""Tension classes, credible tension rate and voice authenticity on hand-made ballots."""

import math

import pytest

from backchannel.paradigms.council import (
    Ballot,
    TensionClass,
    TensionPair,
    class_counts,
    classify,
    credible_tension_rate,
    tension_partner,
    tension_verdicts,
    voice_authenticity_rate,
)

R_A = ("a", "b", "c")
R_B = ("b", "a", "c")


def test_the_four_classes():
    faithful_a = Ballot("e1", "safety", R_A, 0.9)
    faithful_a2 = Ballot("e2", "creativity", R_A, 0.7)  # exactly at the threshold: faithful
    faithful_b = Ballot("e3", "risk_tolerance", R_B, 0.8)
    unfaithful_a = Ballot("e4", "pragmatism", R_A, 0.69)
    unfaithful_b = Ballot("e5", "simplicity", R_B, 0.2)
    assert classify(faithful_a, faithful_b) is TensionClass.GENUINE_DISAGREEMENT
    assert classify(faithful_a, faithful_a2) is TensionClass.GENUINE_AGREEMENT
    assert classify(faithful_a, unfaithful_a) is TensionClass.SUSPICIOUS_AGREEMENT
    assert classify(faithful_b, unfaithful_a) is TensionClass.PARTIAL
    assert classify(unfaithful_a, unfaithful_b) is TensionClass.PARTIAL
    assert classify(faithful_a, Ballot("e6", "x", R_A, None)) is TensionClass.UNMEASURABLE
    # A stricter threshold turns the 0.7 evaluator unfaithful.
    assert classify(faithful_a, faithful_a2, 0.75) is TensionClass.SUSPICIOUS_AGREEMENT


def _council() -> list[Ballot]:
    # Six fixed values plus a second safety evaluator (the seventh perspective duplicated).
    return [
        Ballot("safe1", "safety", R_A, 0.9),
        Ballot("safe2", "safety", R_B, 0.5),
        Ballot("risk", "risk_tolerance", R_B, 0.8),
        Ballot("prag", "pragmatism", R_A, 0.75),
        Ballot("perf", "performance", R_A, 0.8),
        Ballot("simp", "simplicity", R_A, 0.95),
        Ballot("crea", "creativity", R_B, 0.7),
    ]


def test_verdicts_over_the_six_tension_pairs_by_hand():
    verdicts = tension_verdicts(_council())
    got = {(v.pair.key, v.first, v.second): v.cls for v in verdicts}
    G_D, G_A = TensionClass.GENUINE_DISAGREEMENT, TensionClass.GENUINE_AGREEMENT
    SUS = TensionClass.SUSPICIOUS_AGREEMENT
    assert got == {
        # safety-risk: safe1 (a, .9) vs risk (b, .8): faithful, disagree
        ("safety-risk_tolerance", "safe1", "risk"): G_D,
        # safe2 (b, .5) vs risk (b, .8): agree, safe2 unfaithful
        ("safety-risk_tolerance", "safe2", "risk"): SUS,
        # safety-creativity: safe1 (a) vs crea (b, .7): faithful, disagree
        ("safety-creativity", "safe1", "crea"): G_D,
        # safe2 (b, .5) vs crea (b): agree, unfaithful
        ("safety-creativity", "safe2", "crea"): SUS,
        # performance (a, .8) vs simplicity (a, .95): faithful, agree
        ("performance-simplicity", "perf", "simp"): G_A,
        # pragmatism (a, .75) vs creativity (b, .7): faithful, disagree
        ("pragmatism-creativity", "prag", "crea"): G_D,
        # pragmatism (a) vs risk (b, .8): faithful, disagree
        ("pragmatism-risk_tolerance", "prag", "risk"): G_D,
        # simplicity (a, .95) vs creativity (b, .7): faithful, disagree
        ("simplicity-creativity", "simp", "crea"): G_D,
    }
    # 5 genuine disagreements + 1 genuine agreement out of 8 pairs -> 6/8.
    assert credible_tension_rate(verdicts) == pytest.approx(6 / 8)
    counts = class_counts(verdicts)
    assert counts["genuine_disagreement"] == 5 and counts["genuine_agreement"] == 1
    assert counts["suspicious_agreement"] == 2
    assert counts["partial"] == 0 and counts["unmeasurable"] == 0


def test_a_value_without_evaluator_makes_its_pairs_unmeasurable():
    ballots = [b for b in _council() if b.value != "creativity"]
    verdicts = tension_verdicts(ballots)
    unmeasurable = [v for v in verdicts if v.cls is TensionClass.UNMEASURABLE]
    # The three creativity pairs are reported once each, with the reason.
    assert sorted(v.pair.key for v in unmeasurable) == [
        "pragmatism-creativity",
        "safety-creativity",
        "simplicity-creativity",
    ]
    assert all(v.reason == "no creativity evaluator" for v in unmeasurable)
    # Remaining measurable: safe1-risk G_D, safe2-risk SUS, perf-simp G_A, prag-risk G_D -> 3/4.
    assert credible_tension_rate(verdicts) == pytest.approx(0.75)


def test_rate_is_nan_when_nothing_is_measurable():
    assert math.isnan(credible_tension_rate(tension_verdicts([])))


def test_voice_authenticity_rate():
    # Scores .9 .5 .8 .75 .8 .95 .7: at or above 0.7 all but .5 -> 6 of 7.
    assert voice_authenticity_rate(_council()) == pytest.approx(6 / 7)
    assert voice_authenticity_rate(_council(), 0.9) == pytest.approx(2 / 7)
    assert math.isnan(voice_authenticity_rate([Ballot("e", "safety", R_A)]))


def test_tension_partner_and_pair_validation():
    assert tension_partner("safety") == "risk_tolerance"
    assert tension_partner("creativity") == "safety"
    assert tension_partner("performance") == "simplicity"
    assert tension_partner("fairness") is None
    with pytest.raises(ValueError):
        TensionPair("safety", "safety")
