"""Build the shipped environments from Hi-ToM (run once; deterministic).

    python -m backchannel.paradigms.testimony._build_environments Hi-ToM_data.json

Every object of every distinct story (one per chapter) gives a candidate state chain. In story
id and chapter order, each chain is offered to the window rule and the verifier as it is, then
with adapted windows; a chain already taken is not taken twice. While fewer than 120 chains pass,
stories whose object moves only twice are adapted by one added move (`_chain.add_move`), in the
same order; generated stories fill any rest, marked `source: generated`. Every rule's rejections
are counted. The 120 environments, sorted by id, take the deception types in turn (event,
coverage, source); event and coverage alternate a direct and a broadcast key-role message, and
source is always direct: 40 per type, 20 + 20, 20 + 20 and 40.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backchannel.paradigms.testimony._chain import (
    Chain,
    StoryError,
    add_move,
    extract_chain,
    objects,
)
from backchannel.paradigms.testimony._environment import (
    DECEPTIONS,
    FORMAT_VERSION,
    Deception,
    Environment,
    MessageKind,
)
from backchannel.paradigms.testimony._generator import generate
from backchannel.paradigms.testimony._hitom import Story, load_hitom
from backchannel.paradigms.testimony._rule import (
    Assignment,
    Rejected,
    assign_windows,
    build_environment,
)
from backchannel.paradigms.testimony._verify import RULES, rule_of

COUNT = 120
OPTIONS_RULE = "the vote options lack a container of the chain"
GENERATED_MOVES = (3, 4, 5)
# StoryError texts, counted under a rule name like the verifier's.
STORY_RULES = {
    "a move leaves": "a move that leaves the object where it was",
    "the story puts": "a later chapter puts the object where no move took it",
    "moves the": "a move by someone who never entered",
}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One object of one story: its chain, the story's vote options, how it was adapted."""

    id: str
    chain: Chain
    containers: tuple[str, ...]
    assignment: Assignment
    adaptations: tuple[str, ...] = ()
    source: str = "hitom"


def _story_rule(error: StoryError) -> str:
    text = str(error)
    return next((rule for start, rule in STORY_RULES.items() if text.startswith(start)), text)


def _chain_key(chain: Chain) -> tuple[Any, ...]:
    return (chain.target, tuple((n.container, n.actor) for n in chain.nodes))


def build(stories: list[Story], count: int = COUNT) -> dict[str, Any]:
    """The environments file: `count` environments from distinct chains, every rejection counted
    by rule, and every adaptation recorded."""
    rule_rejections: Counter[str] = Counter()
    rejected: dict[str, str] = {}
    chosen: list[Candidate] = []
    taken: set[tuple[Any, ...]] = set()
    short: list[tuple[Story, str]] = []
    chains = 0
    for story in stories:
        for target in objects(story.text):
            chains += 1
            cid = f"{story.story_id}-{target}"
            try:
                chain = extract_chain(story.text, story.story_id, target)
            except StoryError as error:
                rule_rejections[_story_rule(error)] += 1
                rejected[cid] = str(error)
                continue
            if _chain_key(chain) in taken:
                rule_rejections["a chain already taken"] += 1
                rejected[cid] = "the same chain as an environment already taken"
                continue
            try:
                plain = _usable(Candidate(cid, chain, story.containers, assign_windows(chain)))
            except Rejected as error:
                rule_rejections[rule_of(error.problems[0])] += 1
                if chain.moves == 2:
                    short.append((story, target))
                try:
                    adapted = assign_windows(chain, adapt=True)
                    chosen.append(_usable(Candidate(cid, chain, story.containers, adapted)))
                except Rejected as again:
                    rejected[cid] = again.problems[0]
                    continue
            else:
                chosen.append(plain)
            taken.add(_chain_key(chain))
    added = 0
    for story, target in short:
        if len(chosen) >= count:
            break
        cid = f"{story.story_id}-{target}"
        found = add_move(story.text, story.story_id, target, story.containers)
        if found is None or _chain_key(found.chain) in taken:
            continue
        try:
            assignment = assign_windows(found.chain, adapt=True)
            made = Candidate(cid, found.chain, story.containers, assignment, (found.describe(),))
            chosen.append(_usable(made))
        except Rejected:
            continue
        taken.add(_chain_key(found.chain))
        rejected.pop(cid, None)
        added += 1
    generated = 0
    while len(chosen) < count:
        drawn = generate(
            moves=GENERATED_MOVES[generated % len(GENERATED_MOVES)],
            seed=generated,
            deception="event",
            key_kind="direct",
        ).environment
        chosen.append(
            Candidate(
                drawn.chain.story_id,
                drawn.chain,
                drawn.containers,
                Assignment(drawn.slots, drawn.windows),
                source="generated",
            )
        )
        generated += 1
    chosen = sorted(chosen[:count], key=lambda c: c.id)
    environments = [_environment(c, i) for i, c in enumerate(chosen)]
    return {
        "format": FORMAT_VERSION,
        "source": "Hi-ToM (Wu et al., 2023), Hi-ToM_data.json; see PROVENANCE.md",
        "stories": len(stories),
        "chains": chains,
        "rule_rejections": {rule: rule_rejections[rule] for rule in _order(rule_rejections)},
        "as_is": sum(
            c.source == "hitom" and not c.adaptations and c.assignment.adaptation is None
            for c in chosen
        ),
        "adapted_windows": sum(c.assignment.adaptation is not None for c in chosen),
        "added_moves": added,
        "generated": generated,
        "rejected": dict(sorted(rejected.items())),
        "environments": [env.as_dict() for env in environments],
    }


def _usable(candidate: Candidate) -> Candidate:
    """The candidate, once a trial environment of it passes the whole verifier (vote options,
    texts, messages); else Rejected."""
    _environment(candidate, 0)
    return candidate


def _order(counts: Counter[str]) -> list[str]:
    known = [*STORY_RULES.values(), "a chain already taken", *RULES, OPTIONS_RULE]
    return [r for r in known if counts[r]] + sorted(r for r in counts if r not in known)


def _environment(candidate: Candidate, index: int) -> Environment:
    """The index-th environment: types in turn; direct and broadcast alternate within a type."""
    deception: Deception = DECEPTIONS[index % len(DECEPTIONS)]
    turn = index // len(DECEPTIONS)
    kind: MessageKind = "direct" if deception == "source" or turn % 2 == 0 else "broadcast"
    return build_environment(
        candidate.chain,
        candidate.containers,
        deception=deception,
        key_kind=kind,
        environment_id=candidate.id,
        source=candidate.source,
        adaptations=candidate.adaptations,
        assignment=candidate.assignment,
    )


def dump(built: dict[str, Any]) -> str:
    """The file's text: the summary fields indented, one environment per line."""
    head = {k: v for k, v in built.items() if k != "environments"}
    lines = [json.dumps(e, ensure_ascii=False) for e in built["environments"]]
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    return text + ',\n "environments": [\n' + ",\n".join(lines) + "\n ]\n}\n"


def adaptation_table(built: dict[str, Any]) -> str:
    """PROVENANCE.md's list of every environment and how its story was adapted."""
    rows = ["| environment | object | moves | source | adaptation |", "|---|---|---|---|---|"]
    for env in built["environments"]:
        moves = len(env["chain"]) - 1
        how = "; ".join(env["adaptations"]) or "none"
        rows.append(f"| {env['id']} | {env['object']} | {moves} | {env['source']} | {how} |")
    return "\n".join(rows) + "\n"


PROVENANCE_MARK = "<!-- environments: written by _build_environments -->"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m backchannel.paradigms.testimony._build_environments DATA.json")
        return 2
    try:
        built = build(load_hitom(Path(argv[1])))
    except (OSError, ValueError, KeyError) as error:
        print(f"cannot build the environments: {error}")
        return 2
    data = Path(__file__).parent / "data"
    (data / "environments.json").write_text(dump(built), encoding="utf-8")
    provenance = data / "PROVENANCE.md"
    text = provenance.read_text(encoding="utf-8")
    head = text.split(PROVENANCE_MARK)[0]
    provenance.write_text(head + PROVENANCE_MARK + "\n\n" + adaptation_table(built), "utf-8")
    print(
        f"{len(built['environments'])} environments from {built['chains']} chains of "
        f"{built['stories']} stories: {built['as_is']} as they are, {built['adapted_windows']} "
        f"with adapted windows, {built['added_moves']} with an added move, "
        f"{built['generated']} generated -> {data / 'environments.json'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
