"""Fault scripts: tuples parse into validated fault values; typos fail at construction."""

import pytest

from backchannel.testing import DelayFault, DisconnectFault, FakeOpenAIServer, StatusFault
from backchannel.testing._faults import parse_script


def test_tuples_parse_into_fault_values() -> None:
    script = parse_script(
        [None, ("status", 429, 0), ("status", 500), ("delay", 0.25), ("disconnect",)]
    )
    assert script == [
        None,
        StatusFault(429, 0.0),
        StatusFault(500, None),
        DelayFault(0.25),
        DisconnectFault(),
    ]


@pytest.mark.parametrize(
    "entry",
    [("status", 200), ("status",), ("delay", -1), ("explode",), (), "status", ("disconnect", 1)],
)
def test_bad_entries_are_rejected(entry: object) -> None:
    with pytest.raises(ValueError):
        parse_script([entry])


def test_server_validates_its_script_when_built() -> None:
    with pytest.raises(ValueError):
        FakeOpenAIServer(faults=[("status", 299)])
