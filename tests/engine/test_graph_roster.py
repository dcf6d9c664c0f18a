"""Topology and roster building blocks: memory views filtered by who hears whom, distances,
rosters of up to 100, and one clear error for a bad graph or roster file."""

from __future__ import annotations

from pathlib import Path

import pytest

from backchannel.engine import (
    MAX_AGENTS,
    Entry,
    TopologySpec,
    build_graph,
    distances,
    load_roster,
    shipped_roster,
    visible_entries,
)


def test_a_view_holds_only_heard_speakers_the_moderator_and_oneself() -> None:
    transcript = [
        Entry(0, 0, "Moderator", "open"),
        Entry(1, 0, "Alice", "a"),
        Entry(1, 1, "Bob", "b"),
        Entry(1, 2, "Cara", "c"),
    ]
    seen = visible_entries(transcript, "Bob", 1, None, heard={"Alice"})
    assert [e.text for e in seen] == ["open", "a", "b"]
    # without a topology, everyone is heard
    assert len(visible_entries(transcript, "Bob", 1, None)) == 4


def test_distances_to_the_nearest_source() -> None:
    edges = [["A", "B"], ["B", "C"], ["D", "E"]]
    found = distances(edges, ["A", "B", "C", "D", "E"], ["A"])
    assert found == {"A": 0, "B": 1, "C": 2, "D": None, "E": None}
    assert distances(edges, ["A", "B"], []) == {"A": None, "B": None}


def test_the_shipped_roster_has_100_distinct_names_and_keeps_the_first_ten() -> None:
    roster = shipped_roster(MAX_AGENTS)
    assert MAX_AGENTS == 100 and len({name for name, _ in roster}) == 100
    assert roster[:2] == [("Alice", "historian"), ("Bob", "scientist")]
    with pytest.raises(ValueError, match="1 to 100"):
        shipped_roster(101)


def test_a_roster_file(tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("name,persona\nAda,mathematician\nBen,chemist\nAda,poet\n", encoding="utf-8")
    assert load_roster(path, 2) == [("Ada", "mathematician"), ("Ben", "chemist")]
    with pytest.raises(ValueError, match="repeats a name"):
        load_roster(path, 3)
    with pytest.raises(ValueError, match="has 3 agents; the group needs 4"):
        load_roster(path, 4)
    bad = tmp_path / "bad.csv"
    bad.write_text("who,what\nAda,x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="header `name,persona`"):
        load_roster(bad, 1)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (TopologySpec("small_world", k=6), "small_world needs 2 <= k < N"),
        (TopologySpec("scale_free", m=6), "scale_free needs 1 <= m < N"),
        (TopologySpec("edges", edges=((0, 9),)), "edge (0, 9)"),
        (TopologySpec("moon"), "unknown topology"),
    ],
)
def test_a_bad_graph_is_one_clear_error(spec: TopologySpec, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build_graph(spec, 6, 0)
