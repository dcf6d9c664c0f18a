"""Build the shipped environments from Hi-ToM (run once; deterministic).

    python -m backchannel.paradigms.testimony._build_environments Hi-ToM_data.json

Every distinct story is extracted and offered to the window rule and verifier; the rejected ones
are counted with their reasons. The 120 environments are 40 per deception type (event and
coverage: 20 with a direct and 20 with a broadcast key-role message; source: 40 direct). Types
take accepted stories in id order, cycling through the list, each type starting where the last
one stopped, so a story serves at most two types when fewer than 120 stories pass.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from backchannel.paradigms.testimony._chain import StoryError, extract_chain
from backchannel.paradigms.testimony._environment import (
    FORMAT_VERSION,
    Deception,
    Environment,
    MessageKind,
)
from backchannel.paradigms.testimony._hitom import Story, load_hitom
from backchannel.paradigms.testimony._rule import Rejected, build_environment

PLAN: tuple[tuple[Deception, tuple[MessageKind, ...]], ...] = (
    ("event", ("direct", "broadcast") * 20),
    ("coverage", ("direct", "broadcast") * 20),
    ("source", ("direct",) * 40),
)


def reason_kind(reason: str) -> str:
    """A rejection reason without the story's names and numbers, for counting."""
    if reason.startswith("the chain has"):
        return "fewer than 3 moves"
    if reason.startswith("a move leaves"):
        return "a move that leaves the object where it was"
    return re.sub(r"\s*\([A-Z][a-z]+ and [A-Z][a-z]+\)", "", reason)


Plan = tuple[tuple[Deception, tuple[MessageKind, ...]], ...]


def build(stories: list[Story], plan: Plan = PLAN) -> dict[str, Any]:
    """The environments file: environments (per type, one per key-message kind listed in
    `plan`), and every rejected story with its reason."""
    accepted: list[Story] = []
    rejected: dict[str, str] = {}
    for story in stories:
        try:
            build_environment(
                extract_chain(story.text, story.story_id),
                story.containers,
                deception="event",
                key_kind="direct",
                environment_id=story.story_id,
            )
        except (StoryError, Rejected) as error:
            reason = error.problems[0] if isinstance(error, Rejected) else str(error)
            rejected[story.story_id] = reason
            continue
        accepted.append(story)
    if not accepted:
        raise ValueError("no story passed the verifier")
    environments: list[Environment] = []
    cursor = 0
    for deception, kinds in plan:
        used: set[str] = set()
        for kind in kinds:
            for _ in range(len(accepted)):
                story = accepted[cursor % len(accepted)]
                cursor += 1
                if story.story_id in used:
                    continue
                try:
                    env = build_environment(
                        extract_chain(story.text, story.story_id),
                        story.containers,
                        deception=deception,
                        key_kind=kind,
                        environment_id=f"{story.story_id}-{deception}",
                    )
                except Rejected:
                    continue
                used.add(story.story_id)
                environments.append(env)
                break
            else:
                raise ValueError(f"not enough stories pass for {deception} ({kind})")
    reasons = Counter(reason_kind(r) for r in rejected.values())
    return {
        "format": FORMAT_VERSION,
        "source": "Hi-ToM (Wu et al., 2023), Hi-ToM_data.json; see PROVENANCE.md",
        "stories": len(stories),
        "accepted_stories": len(accepted),
        "rejected_stories": len(rejected),
        "rejection_reasons": dict(sorted(reasons.items())),
        "rejected": dict(sorted(rejected.items())),
        "environments": [env.as_dict() for env in environments],
    }


def dump(built: dict[str, Any]) -> str:
    """The file's text: the summary fields indented, one environment per line."""
    head = {k: v for k, v in built.items() if k != "environments"}
    lines = [json.dumps(e, ensure_ascii=False) for e in built["environments"]]
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    return text + ',\n "environments": [\n' + ",\n".join(lines) + "\n ]\n}\n"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m backchannel.paradigms.testimony._build_environments DATA.json")
        return 2
    try:
        built = build(load_hitom(Path(argv[1])))
    except (OSError, ValueError, KeyError) as error:
        print(f"cannot build the environments: {error}")
        return 2
    target = Path(__file__).parent / "data" / "environments.json"
    target.write_text(dump(built), encoding="utf-8")
    print(
        f"{len(built['environments'])} environments from {built['accepted_stories']} of "
        f"{built['stories']} stories ({built['rejected_stories']} rejected) -> {target}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
