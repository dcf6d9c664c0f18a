"""Paradigms by name, by `package.module:Class` path, and the errors of a wrong one."""

from __future__ import annotations

import pytest

from backchannel.errors import ConfigError
from backchannel.paradigms import get_paradigm, registered
from backchannel.paradigms.discussion import Discussion


def test_built_in_names_and_class_paths_give_the_same_paradigm() -> None:
    assert isinstance(get_paradigm("discussion"), Discussion)
    assert isinstance(get_paradigm("backchannel.paradigms.discussion:Discussion"), Discussion)
    assert {"discussion", "peer_pressure", "dyad", "council"} <= set(registered())


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("nosuch", ["unknown paradigm 'nosuch'", "discussion", "package.module:Class"]),
        ("nosuch_pkg.mod:Thing", ["cannot import 'nosuch_pkg.mod'", "install the package"]),
        ("backchannel.paradigms:Nothing", ["has no 'Nothing'", "package.module:ClassName"]),
        ("backchannel.errors:ConfigError", ["is not a subclass of backchannel.Paradigm"]),
        ("backchannel.paradigms:Paradigm", ["abstract"]),
    ],
)
def test_a_wrong_paradigm_is_one_config_error(name: str, words: list[str]) -> None:
    with pytest.raises(ConfigError) as raised:
        get_paradigm(name)
    for word in words:
        assert word in str(raised.value)
