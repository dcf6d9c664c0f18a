"""minimal_instance: the smallest value valid under each schema kind the paradigms use."""

import pytest

from backchannel.testing import UnsupportedSchemaError, minimal_instance


def test_enum_string_is_first_value() -> None:
    assert minimal_instance({"type": "string", "enum": ["ACCEPT", "REJECT"]}) == "ACCEPT"


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "integer"}, 0),
        ({"type": "integer", "minimum": 1, "maximum": 7}, 1),  # Likert 1..7 -> minimum
        ({"type": "integer", "minimum": -3, "maximum": 3}, -3),
        ({"type": "integer", "exclusiveMinimum": 0}, 1),
        ({"type": "integer", "maximum": -2}, -2),  # no minimum, 0 not allowed -> maximum
        ({"type": "number", "minimum": 0.5}, 1.0),  # ceil(0.5) = 1
    ],
)
def test_integer_bounds(schema: dict, expected: float) -> None:
    assert minimal_instance(schema) == expected


def test_integer_bounds_that_leave_no_value_are_rejected() -> None:
    with pytest.raises(UnsupportedSchemaError):
        minimal_instance({"type": "integer", "minimum": 3, "maximum": 2})


def test_ranking_is_a_permutation_of_the_enum() -> None:
    options = ["A", "B", "C", "D", "E"]
    schema = {
        "type": "array",
        "items": {"type": "string", "enum": options},
        "minItems": 5,
        "maxItems": 5,
        "uniqueItems": True,
    }
    rankings = {tuple(minimal_instance(schema, seed=seed)) for seed in range(20)}
    for ranking in rankings:
        assert sorted(ranking) == options
    # 20 seeds over 120 permutations: the order depends on the seed, not always the enum order.
    assert len(rankings) > 1
    assert minimal_instance(schema, seed=3) == minimal_instance(schema, seed=3)


def test_object_of_supported_kinds_with_defs_and_ref() -> None:
    # The shape pydantic's model_json_schema() produces for an enum field.
    schema = {
        "$defs": {"Stance": {"type": "string", "enum": ["agree", "disagree"]}},
        "type": "object",
        "properties": {
            "stance": {"$ref": "#/$defs/Stance"},
            "confidence": {"type": "integer", "minimum": 1, "maximum": 5},
            "reason": {"type": "string"},
            "note": {"anyOf": [{"type": "null"}, {"type": "string"}]},
            "flags": {"type": "array", "items": {"type": "boolean"}},
        },
        "required": ["stance", "confidence", "reason", "note", "flags"],
        "additionalProperties": False,
    }
    assert minimal_instance(schema) == {
        "stance": "agree",
        "confidence": 1,
        "reason": "x",
        "note": "x",
        "flags": [],
    }


def test_unsupported_constructs_fail_loudly() -> None:
    with pytest.raises(UnsupportedSchemaError):
        minimal_instance({"$ref": "https://example.org/schema.json"})
    with pytest.raises(UnsupportedSchemaError):
        minimal_instance({"type": "widget"})
    with pytest.raises(UnsupportedSchemaError):
        minimal_instance(
            {"type": "array", "items": {"enum": ["a", "b"]}, "minItems": 3, "uniqueItems": True}
        )
