"""An item's payload: a mapping of field names to JSON values, kept as a plain dict (what the
store writes as the conversation's `meta["item"]`), with bad payloads refused at once."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import pytest

from backchannel.engine import Item


def test_any_mapping_is_kept_as_a_plain_dict_and_stored_as_its_json() -> None:
    item = Item("q1", MappingProxyType({"question": "Why?", "aliases": ["a", "b"]}))
    assert type(item.payload) is dict
    # a mapping proxy itself is no JSON: the store would have written its repr
    assert json.loads(json.dumps(item.payload)) == {"question": "Why?", "aliases": ["a", "b"]}
    assert Item("q2").payload == {}


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (["question"], "the payload must be a mapping of field names to JSON values, not list"),
        ({1: "x"}, "payload keys must be text, not 1"),
    ],
)
def test_a_payload_that_is_no_mapping_of_names_is_refused(payload: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        Item("q1", payload)
