"""Policy scenarios: a question and its options, loaded from YAML (shipped or user files)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

RESERVED_IDS = ("none", "several")
"""Option ids the `argued` judge task keeps for itself (its labels besides the options)."""


@dataclass(frozen=True)
class Option:
    """One policy option: a stable id (used in rankings), a display name and a description."""

    id: str
    name: str
    description: str

    def __post_init__(self) -> None:
        if not self.id or not self.id.replace("_", "").isalnum():
            raise ValueError(f"option id must be letters, digits and '_', got {self.id!r}")
        if not self.name.strip() or not self.description.strip():
            raise ValueError(f"option {self.id!r} needs a name and a description")


@dataclass(frozen=True)
class Scenario:
    """A policy question with its options; `favourite` names a known-attractive option, if any."""

    id: str
    title: str
    question: str
    options: tuple[Option, ...]
    favourite: str | None = None

    def __post_init__(self) -> None:
        if not self.id or not self.question.strip():
            raise ValueError("a scenario needs an id and a question")
        ids = [o.id for o in self.options]
        if len(ids) < 2 or len(set(ids)) != len(ids):
            raise ValueError(f"scenario {self.id!r} needs at least two distinct options")
        reserved = sorted(set(ids) & set(RESERVED_IDS))
        if reserved:
            raise ValueError(
                f"scenario {self.id!r}: option id {reserved[0]!r} is a label of the `argued` "
                "judge task (a turn that argues no option, or several); rename the option"
            )
        if self.favourite is not None and self.favourite not in ids:
            raise ValueError(f"scenario {self.id!r}: favourite {self.favourite!r} is no option")

    @property
    def option_ids(self) -> tuple[str, ...]:
        return tuple(o.id for o in self.options)

    def option(self, option_id: str) -> Option:
        for option in self.options:
            if option.id == option_id:
                return option
        raise KeyError(option_id)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scenario:
        try:
            options = tuple(Option(**o) for o in data["options"])
            return cls(
                id=str(data["id"]),
                title=str(data.get("title", data["id"])),
                question=str(data["question"]),
                options=options,
                favourite=data.get("favourite"),
            )
        except (KeyError, TypeError) as error:
            raise ValueError(f"invalid scenario: {error}") from error

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "question": self.question,
            "favourite": self.favourite,
            "options": [
                {"id": o.id, "name": o.name, "description": o.description} for o in self.options
            ],
        }


SHIPPED = ("child_welfare", "housing")


def load_scenario(name_or_path: str, base: Path | None = None) -> Scenario:
    """A shipped scenario by name, or a user's YAML file (relative paths against `base`)."""
    if name_or_path in SHIPPED:
        text = resources.files(__package__).joinpath(f"scenarios/{name_or_path}.yaml").read_text()
        source = f"shipped scenario {name_or_path!r}"
    else:
        path = Path(name_or_path)
        if not path.is_absolute() and base is not None:
            path = base / path
        if not path.exists():
            raise ValueError(
                f"unknown scenario {name_or_path!r}: name a shipped one ({', '.join(SHIPPED)}) "
                "or a YAML file"
            )
        text, source = path.read_text(), str(path)
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError(f"{source} is not a YAML mapping")
    try:
        return Scenario.from_dict(data)
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from error
