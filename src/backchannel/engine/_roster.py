"""Rosters of up to 100 agents: names and personas from shipped lists, or from a user file.

The first ten entries are the group paradigms' historical roster (Alice the historian, ...), so a
group of ten or fewer is named as it always was.
"""

from __future__ import annotations

import csv
from pathlib import Path

NAMES = (
    "Alice", "Bob", "Carol", "David", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Jack",
    "Karen", "Leo", "Mallory", "Nina", "Oscar", "Peggy", "Quinn", "Rupert", "Sybil", "Trent",
    "Uma", "Victor", "Wendy", "Xavier", "Yara", "Zane", "Amara", "Bruno", "Celia", "Dmitri",
    "Elena", "Felix", "Gemma", "Hugo", "Iris", "Jonas", "Kira", "Lars", "Maya", "Nils",
    "Olga", "Pablo", "Rosa", "Stefan", "Tara", "Ulrich", "Vera", "Walter", "Ximena", "Yusuf",
    "Zoe", "Aiden", "Bianca", "Caleb", "Dora", "Emil", "Fiona", "Gavin", "Hana", "Igor",
    "Julia", "Kofi", "Lena", "Marco", "Naomi", "Omar", "Petra", "Raj", "Sofia", "Tomas",
    "Una", "Viktor", "Willa", "Yosef", "Zara", "Anders", "Beatriz", "Cyrus", "Daria", "Elias",
    "Farah", "Gustav", "Helga", "Imani", "Jasper", "Keiko", "Luca", "Mirela", "Nadia", "Otto",
    "Priya", "Ravi", "Selma", "Tobias", "Ursula", "Vikram", "Wanda", "Yuki", "Zeno", "Agnes",
)  # fmt: skip
PERSONAS = (
    "historian", "scientist", "journalist", "teacher", "analyst",
    "librarian", "researcher", "engineer", "philosopher", "student",
    "economist", "physician", "lawyer", "geographer", "editor",
    "archivist", "statistician", "translator", "architect", "chemist",
)  # fmt: skip
MAX_AGENTS = len(NAMES)


def shipped_roster(size: int) -> list[tuple[str, str]]:
    """The first `size` (name, persona) pairs; personas repeat after twenty."""
    if not 1 <= size <= MAX_AGENTS:
        raise ValueError(f"a shipped roster has 1 to {MAX_AGENTS} agents, not {size}")
    return [(NAMES[i], PERSONAS[i % len(PERSONAS)]) for i in range(size)]


def load_roster(path: Path, size: int) -> list[tuple[str, str]]:
    """The first `size` rows of a CSV file with a header `name,persona`."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"roster file {path} cannot be read ({error}); give a UTF-8 CSV") from None
    if rows and not {"name", "persona"} <= set(rows[0]):
        raise ValueError(f"roster file {path} needs the header `name,persona`")
    pairs = [((r.get("name") or "").strip(), (r.get("persona") or "").strip()) for r in rows]
    if any(not name for name, _ in pairs):
        raise ValueError(f"roster file {path} has a row without a name")
    if len(pairs) < size:
        raise ValueError(f"roster file {path} has {len(pairs)} agents; the group needs {size}")
    names = [name for name, _ in pairs[:size]]
    if len(set(names)) != len(names):
        raise ValueError(f"roster file {path} repeats a name among its first {size} rows")
    return pairs[:size]
