"""The simulated population in the council paradigm: evaluators, verifier and Delphi rounds.

An evaluator with value v ranks the options by affinity[v][option] plus a Gumbel draw per call,
so its first choice is multinomial logit over the affinities. Its rationale has `sentences`
sentences, each reasoning from v with probability `faithfulness`; the verifier scores the share
of sentences that name the value. A Delphi revision keeps the first ranking, or with
probability `revise` draws a new one by the same rule. Advocates state their option.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from backchannel.backends._pop_draw import call_uniform, gumbel, system_text, user_text
from backchannel.backends._types import JsonSchema, Request

if TYPE_CHECKING:
    from backchannel.backends._population import PopulationRules

_EVALUATOR = "You are an evaluator on a policy council."
_ADVOCATE = re.compile(r"You are an advocate on a policy council\. You argue for one option: (.+)")
_VALUE = re.compile(r"^Value: (\S+)", re.MULTILINE)
_OPTION_IDS = re.compile(r"The option ids are: (.+?)\.\s*$", re.MULTILINE)
_VERIFY = "You check whether a rationale reasons faithfully from an assigned value."
_RATIONALE = re.compile(r"Rationale:\n(.*?)\n\nScore from 0 to 1", re.DOTALL)


def _ranking(
    request: Request, value: str, options: list[str], rules: PopulationRules, salt: str
) -> list[str]:
    affinity = rules.council.affinities.get(value, {})
    noisy = {
        o: affinity.get(o, 0.0) + gumbel(call_uniform(request, f"{salt}:{o}")) for o in options
    }
    return sorted(options, key=lambda o: -noisy[o])


def _rationale(request: Request, value: str, rules: PopulationRules) -> str:
    sentences = []
    for i in range(rules.council.sentences):
        if call_uniform(request, f"sentence:{i}") < rules.council.faithfulness:
            sentences.append(f"Judged by {value}, this ordering serves it best.")
        else:
            sentences.append("Cost and speed alone should settle this.")
    return " ".join(sentences)


def _score(user: str) -> str:
    found_value = _VALUE.search(user)
    found = _RATIONALE.search(user)
    if found_value is None or found is None:
        return json.dumps({"score": 0.0})
    value = found_value.group(1).lower()
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", found.group(1).strip()) if s]
    share = sum(value in s.lower() for s in sentences) / len(sentences) if sentences else 0.0
    return json.dumps({"score": round(share, 6)})


def _options(request: Request) -> list[str] | None:
    constraint = request.constraint
    if isinstance(constraint, JsonSchema):
        ranking = constraint.schema.get("properties", {}).get("ranking", {})
        options = ranking.get("items", {}).get("enum")
        if options:
            return [str(o) for o in options]
    found = _OPTION_IDS.search(user_text(request))
    return [o.strip() for o in found.group(1).split(",")] if found else None


def council_answer(request: Request, rules: PopulationRules) -> str | None:
    """The population's answer to a council prompt, or None for any other prompt."""
    system = system_text(request)
    user = user_text(request)
    if user.startswith(_VERIFY):
        return _score(user)
    advocate = _ADVOCATE.search(system)
    if advocate:
        option = advocate.group(1).strip()
        return f"The council should adopt {option}; it serves the people affected."
    if _EVALUATOR not in system:
        return None
    found_value = _VALUE.search(system)
    options = _options(request)
    if found_value is None or options is None:
        return None
    value = found_value.group(1)
    earlier = [m.content for m in request.messages if m.role == "assistant"]
    ranking = _ranking(request, value, options, rules, "first")
    if earlier:  # a Delphi revision: keep the first ranking unless this call revises
        try:
            kept = json.loads(earlier[0])["ranking"]
        except (ValueError, KeyError, TypeError):
            kept = None
        if isinstance(kept, list) and call_uniform(request, "revise") >= rules.council.revise:
            ranking = [str(o) for o in kept]
        else:
            ranking = _ranking(request, value, options, rules, "revised")
    return json.dumps({"ranking": ranking, "rationale": _rationale(request, value, rules)})
