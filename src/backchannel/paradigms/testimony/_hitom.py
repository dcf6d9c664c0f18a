"""Hi-ToM records to stories: each distinct story once, with a stable id and its containers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backchannel.paradigms.testimony._chain import story_lines


@dataclass(frozen=True, slots=True)
class Story:
    """One distinct Hi-ToM story: `hitom-NNNN` after the smallest sample id that carries it."""

    story_id: str
    text: str
    containers: tuple[str, ...]


def parse_choices(choices: str) -> tuple[str, ...]:
    """`"A. blue_drawer, B. green_crate, ..."` -> ("blue_drawer", "green_crate", ...)."""
    found = []
    for part in choices.split(","):
        letter, _, name = part.strip().partition(". ")
        if not name or len(letter) != 1:
            raise ValueError(f"unreadable choice {part.strip()!r}")
        found.append(name.strip())
    return tuple(found)


def stories_from_records(records: list[dict[str, Any]]) -> list[Story]:
    """Distinct stories (the same numbered lines in CoTP and VP records and all question
    orders), sorted by id."""
    by_lines: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for record in records:
        by_lines.setdefault(tuple(story_lines(record["story"])), []).append(record)
    stories = []
    for lines, group in by_lines.items():
        first = min(group, key=lambda r: int(r["sample_id"]))
        text = "\n".join(f"{i} {line}" for i, line in enumerate(lines, start=1))
        stories.append(
            Story(f"hitom-{int(first['sample_id']):04d}", text, parse_choices(first["choices"]))
        )
    return sorted(stories, key=lambda s: s.story_id)


def load_hitom(path: Path) -> list[Story]:
    """The distinct stories of a Hi-ToM data file (`{"data": [records]}`)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return stories_from_records(data["data"])
