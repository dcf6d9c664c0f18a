"""Small hand-built items shared by the dataset tests."""

from __future__ import annotations

import pytest

from backchannel.datasets import FactItem


@pytest.fixture
def paris() -> FactItem:
    return FactItem(
        item_id="t/1",
        dataset="test",
        question="What is the capital of France?",
        true_answer="Paris",
        true_aliases=("Paris", "City of Light"),
        false_answer="Lyon",
        false_aliases=("Lyon",),
        relation="capital",
        answer_type="place",
    )
