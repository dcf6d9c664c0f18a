"""The stopping rule of `run --until`: its syntax, its batches and its decision, by hand."""

from __future__ import annotations

import pytest

from backchannel.errors import ConfigError
from backchannel.orchestration import Reading, Target, describe_looks, parse_target, stop_reason
from backchannel.orchestration._stopping import batch_ends, decide, default_batch


def test_one_condition_and_a_conjunction_parse() -> None:
    target = parse_target("fpi_gap.halfwidth<=0.05")
    assert [(c.contrast, c.bound, c.strict) for c in target.conditions] == [
        ("fpi_gap", 0.05, False)
    ]
    both = parse_target(" fpi_gap.halfwidth <= 0.05 and c0_c1.halfwidth<1e-1 ")
    assert both.contrasts == ["fpi_gap", "c0_c1"]
    assert [c.strict for c in both.conditions] == [False, True]
    assert str(both) == "fpi_gap.halfwidth<=0.05 and c0_c1.halfwidth<0.1"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "is empty"),
        ("fpi_gap", "cannot read 'fpi_gap'"),
        ("fpi_gap.halfwidth>=0.05", "cannot read"),
        ("fpi_gap.halfwidth<=x", "cannot read"),
        ("fpi_gap.halfwidth<=0.05 or b.halfwidth<=1", "cannot read"),
        ("fpi_gap.halfwidth<=0.05 and", "cannot read"),
        ("fpi_gap.p<=0.05", "stops on p; a run stops on precision only"),
        ("fpi_gap.estimate<=0.2", "stops on estimate"),
        ("fpi_gap.halfwidth<=0", "must be a positive number"),
    ],
)
def test_bad_expressions_are_one_line_errors(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_target(text)
    assert says in str(error.value)
    assert "\n" not in str(error.value)


def test_an_unknown_contrast_is_refused_naming_the_declared_ones() -> None:
    target = parse_target("fpi_gap.halfwidth<=0.05 and gap.halfwidth<=0.1")
    target.check(["fpi_gap", "gap", "other"], "peer_pressure")
    with pytest.raises(ConfigError, match=r"names gap, which x does not declare.*: fpi_gap$"):
        target.check(["fpi_gap"], "x")
    with pytest.raises(ConfigError, match="are: none"):
        target.check([], "discussion")


def test_a_target_holds_only_when_every_half_width_is_within_its_bound() -> None:
    target = parse_target("a.halfwidth<=0.05 and b.halfwidth<0.1")
    narrow = Reading(0.2, 0.05, 40)
    assert target.holds({"a": narrow, "b": Reading(0.0, 0.099, 40)})
    assert not target.holds({"a": narrow, "b": Reading(0.0, 0.1, 40)})  # strict bound
    assert not target.holds({"a": Reading(0.2, 0.0501, 40), "b": Reading(0.0, 0.01, 40)})
    assert not target.holds({"a": narrow})  # b not read
    assert not target.holds({"a": narrow, "b": Reading(None, None, 1, "one conversation")})
    assert not target.holds({"a": narrow, "b": Reading(0.1, float("nan"), 3)})


def test_batches_end_at_first_then_every_batch_capped_at_the_ceiling() -> None:
    assert batch_ends(10, 3) == [3, 6, 9, 10]
    assert batch_ends(10, 3, first=4) == [4, 7, 10]
    assert batch_ends(2, 5) == [2]
    assert batch_ends(5, 1) == [1, 2, 3, 4, 5]
    assert default_batch(40) == 4 and default_batch(5) == 1 and default_batch(11) == 2


def test_the_decision_is_the_target_then_the_ceiling() -> None:
    target = Target(parse_target("a.halfwidth<=0.1").conditions)
    wide, narrow = {"a": Reading(0.3, 0.2, 10)}, {"a": Reading(0.3, 0.1, 10)}
    assert decide(target, wide, 4, 10) is None
    assert decide(target, narrow, 4, 10) == "target"
    assert decide(target, wide, 10, 10) == "ceiling"
    assert decide(target, narrow, 10, 10) == "target"


def test_looks_and_reasons_read_as_one_line_each() -> None:
    look = {
        "look": 1,
        "replicates": 4,
        "conversations": 16,
        "calls": 210,
        "contrasts": {
            "a": Reading(0.25, 0.04, 16).as_dict(),
            "b": Reading(None, None, 0, "no k=0 cell").as_dict(),
        },
        "stop": "target",
    }
    assert describe_looks([look]) == [
        "look 2: 4 replicates, 16 conversations, 210 calls: a 0.250 ± 0.040 (n 16); "
        "b not computable yet (no k=0 cell)"
    ]
    assert stop_reason(look, "a.halfwidth<=0.05") == (
        "stopped after 4 replicates (16 conversations): a.halfwidth<=0.05 holds"
    )
    assert "ceiling was reached" in stop_reason({**look, "stop": "ceiling"}, "t")
    assert stop_reason({**look, "stop": None}, "t").startswith("running: last look")


def test_a_reading_over_strata_keeps_each_row_and_reads_as_its_widest() -> None:
    rows = (
        {"stratum": {"model": "a"}, "halfwidth": 0.1},
        {"stratum": {"model": "b"}, "halfwidth": 0.2},
    )
    over = Reading(None, 0.2, 8, strata=rows).as_dict()
    assert over["strata"] == [dict(r) for r in rows]
    assert "strata" not in Reading(0.3, 0.1, 8, strata=rows[:1]).as_dict()
    look = {"look": 0, "replicates": 2, "conversations": 16, "calls": 1, "stop": None}
    line = describe_looks([{**look, "contrasts": {"gap": over}}])[0]
    assert line.endswith("gap ± 0.200 at widest over 2 strata (n 8)")
