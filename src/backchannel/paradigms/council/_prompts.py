"""Message builders for every council call; templates are package files under `prompts/`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources

from backchannel.backends import Message
from backchannel.paradigms.council._scenarios import Scenario
from backchannel.paradigms.council._settings import ValueSpec

PROMPT_PACKAGE = "backchannel.paradigms.council.prompts"
REDACTED = "[an option]"


@cache
def template(name: str) -> str:
    """One prompt template's text."""
    return (resources.files(PROMPT_PACKAGE) / name).read_text(encoding="utf-8").strip()


def scenario_text(scenario: Scenario) -> str:
    """The question and the options with their ids, names and descriptions."""
    options = "\n".join(f"- {o.name} (id: {o.id}): {o.description}" for o in scenario.options)
    return template("scenario.txt").format(question=scenario.question, options=options)


def evaluator_system(value: ValueSpec) -> str:
    return template("evaluator_system.txt").format(
        value_name=value.name, value_definition=value.definition
    )


def evaluation_messages(
    scenario: Scenario, debate: str, value: ValueSpec, words: int
) -> list[Message]:
    """Phase 2: the evaluator reads the full debate and ranks; it sees no other evaluator."""
    user = template("evaluate.txt").format(
        scenario=scenario_text(scenario),
        debate=debate,
        value_name=value.name,
        words=words,
        option_ids=", ".join(scenario.option_ids),
    )
    return [Message("system", evaluator_system(value)), Message("user", user)]


def redact_options(text: str, scenario: Scenario) -> str:
    """Replace every option's id and name in `text` (case-insensitive, whole words only) by a
    neutral marker, so a short id such as `a` never mangles the words around it."""
    names = sorted(
        {n for o in scenario.options for n in (o.id, o.name, o.id.replace("_", " "))},
        key=len,
        reverse=True,
    )
    alternatives = "|".join(re.escape(n) for n in names)
    pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", flags=re.IGNORECASE)
    return pattern.sub(REDACTED, text)


def verification_messages(value: ValueSpec, rationale: str) -> list[Message]:
    """Phase 3: only the value's name, its definition and the (redacted) rationale."""
    text = template("verify.txt").format(
        value_name=value.name, value_definition=value.definition, rationale=rationale
    )
    return [Message("user", text)]


def delphi_messages(
    initial: Sequence[Message],
    own_answer: str,
    variant: str,
    value: ValueSpec,
    peers: Sequence[tuple[str, str]] = (),
) -> list[Message]:
    """A Delphi round: the evaluator's own exchange, then the variant's feedback.

    `peers` holds (value name, rationale) of the evaluators it is shown (none for self_check).
    """
    shown = "\n\n".join(f"[{name}] {rationale}" for name, rationale in peers)
    if variant == "all_critiques":
        feedback = template("delphi_all_critiques.txt").format(peers=shown, value_name=value.name)
    elif variant == "partner_critique":
        partner = peers[0][0] if peers else ""
        feedback = template("delphi_partner_critique.txt").format(
            peers=shown, partner_value=partner, value_name=value.name
        )
    elif variant == "self_check":
        feedback = template("delphi_self_check.txt").format(value_name=value.name)
    else:
        raise ValueError(f"unknown Delphi variant {variant!r}")
    return [*initial, Message("assistant", own_answer), Message("user", feedback)]


def profile_messages(value: ValueSpec, words: int) -> list[Message]:
    """The standard profiling prompt under one value perspective."""
    return [
        Message("system", evaluator_system(value)),
        Message("user", template("profile.txt").format(words=words)),
    ]


def advocate_system(scenario: Scenario, option_id: str) -> str:
    option = scenario.option(option_id)
    return template("advocate_system.txt").format(
        option_name=option.name, option_description=option.description
    )
