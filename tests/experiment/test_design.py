"""Design expansion: cells in declaration order minus exclusions, items, replicates, seeds."""

from __future__ import annotations

import pytest
from conftest import WriteExperiment, discussion_experiment

from backchannel.errors import ConfigError
from backchannel.experiment import cell_key, expand, expand_cells, load_experiment
from backchannel.seeding import derive_seed


def test_cells_are_all_combinations_in_declaration_order_minus_exclusions() -> None:
    factors = {"model": ["sim/a", "sim/b"], "k": [1, 2, 3]}
    cells = expand_cells(factors, [{"model": "sim/b", "k": 3}, {"k": 1}])
    # 2 x 3 = 6 combinations; {k: 1} removes two, {sim/b, 3} one more: 3 remain.
    assert cells == [
        {"model": "sim/a", "k": 2},
        {"model": "sim/a", "k": 3},
        {"model": "sim/b", "k": 2},
    ]
    assert expand_cells({}, []) == [{}]
    with pytest.raises(ConfigError, match="unknown factors"):
        expand_cells(factors, [{"K": 1}])


def test_cell_keys_are_sorted_and_readable() -> None:
    assert cell_key({"model": "sim", "k": 2, "flag": True}) == "flag=true;k=2;model=sim"
    assert cell_key({}) == ""


def test_expand_crosses_cells_items_and_replicates_with_derived_seeds(
    write_experiment: WriteExperiment,
) -> None:
    data = discussion_experiment(factors={"agents": [2, 3]}, replicates=2, seed=5)
    specs = expand(load_experiment(write_experiment(data)))
    # 2 cells x 2 questions x 2 replicates = 8 conversations.
    assert [s.conversation_id for s in specs] == [
        f"agents={a}/{q}/{r}" for a in (2, 3) for q in ("q1", "q2") for r in (0, 1)
    ]
    assert all(s.seed == derive_seed(5, s.conversation_id) for s in specs)
    assert len({s.seed for s in specs}) == 8
    assert specs[0].item.payload == {"question": "What is the capital of Australia?"}
    again = expand(load_experiment(write_experiment(data)))
    assert [s.seed for s in again] == [s.seed for s in specs]


def test_items_limit_and_design_without_factors(write_experiment: WriteExperiment) -> None:
    data = discussion_experiment(factors={}, items_limit=1)
    data["settings"]["model"] = "sim"
    specs = expand(load_experiment(write_experiment(data)))
    assert [s.conversation_id for s in specs] == ["all/q1/0"]
    assert specs[0].cell == {} and specs[0].cell_key == ""


def test_replicates_by_gives_matching_cells_their_own_count(
    write_experiment: WriteExperiment,
) -> None:
    data = discussion_experiment(
        factors={"agents": [2, 3]},
        replicates=1,
        replicates_by=[{"when": {"agents": 3}, "replicates": 2}],
    )
    specs = expand(load_experiment(write_experiment(data)))
    # agents=2: 2 questions x 1 replicate; agents=3: 2 questions x 2 replicates.
    assert [s.conversation_id for s in specs] == [
        "agents=2/q1/0",
        "agents=2/q2/0",
        "agents=3/q1/0",
        "agents=3/q1/1",
        "agents=3/q2/0",
        "agents=3/q2/1",
    ]


def test_replicates_by_naming_an_unknown_factor_is_a_config_error(
    write_experiment: WriteExperiment,
) -> None:
    data = discussion_experiment(
        factors={"agents": [2]}, replicates_by=[{"when": {"pool": "B"}, "replicates": 2}]
    )
    with pytest.raises(ConfigError, match=r"replicates_by\.0\.when names unknown factors"):
        load_experiment(write_experiment(data))


def test_exclude_and_replicates_by_tell_true_from_1() -> None:
    from backchannel.experiment._schema import same_level

    cells = expand_cells({"variant": [1, True]}, [{"variant": 1}])
    assert cells == [{"variant": True}]
    assert same_level(True, True) and not same_level(True, 1) and same_level(2, 2)


def test_paired_arms_share_a_call_seed_per_item_and_replicate(
    write_experiment: WriteExperiment,
) -> None:
    data = {
        "name": "pairs",
        "paradigm": "testimony",
        "seed": 3,
        "replicates": 2,
        "items_limit": 2,
        "factors": {"model": ["sim#a", "sim#b"], "condition": ["C0", "C1"]},
        "settings": {"model": "sim"},
    }
    specs = expand(load_experiment(write_experiment(data)))
    by_pair: dict[tuple[str, str, int], set[int | None]] = {}
    for spec in specs:
        by_pair.setdefault((spec.cell["model"], spec.item.item_id, spec.replicate), set()).add(
            spec.call_seed
        )
    # condition is a paired factor of testimony: C0 and C1 of one model, story and replicate
    # share their call seed; the model is not, so each model's pairs have their own.
    assert all(len(seeds) == 1 and None not in seeds for seeds in by_pair.values())
    assert len({next(iter(s)) for s in by_pair.values()}) == len(by_pair) == 2 * 2 * 2
    off = expand(load_experiment(write_experiment({**data, "share_paired_calls": False})))
    assert {s.call_seed for s in off} == {None}
    assert [s.seed for s in off] == [s.seed for s in specs]  # conversation seeds unchanged


def test_a_design_without_paired_factors_keeps_per_conversation_call_seeds(
    write_experiment: WriteExperiment,
) -> None:
    data = discussion_experiment(factors={"agents": [2, 3]})
    assert {s.call_seed for s in expand(load_experiment(write_experiment(data)))} == {None}
