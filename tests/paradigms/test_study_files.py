"""Every built-in paradigm ships its study's published headline values, readable and cited."""

from __future__ import annotations

import pytest

from backchannel.paradigms import get_paradigm


@pytest.mark.parametrize("name", ["peer_pressure", "testimony", "dyad", "council"])
def test_the_study_values_load_with_a_citation_and_cells(name: str) -> None:
    study = get_paradigm(name).study()
    assert study is not None and study.citation
    assert study.values and all(v.where and v.model for v in study.values)
    for value in study.values:
        if value.low is not None and value.high is not None:
            assert value.low <= value.value <= value.high


def test_a_paradigm_without_a_study_file_has_none() -> None:
    assert get_paradigm("discussion").study() is None
