"""Scripted council models for the protocol tests: every request is captured."""

import hashlib
import json

from backchannel.backends import (
    JsonSchema,
    LabelSet,
    Request,
    register_sim,
    scripted_answer,
    unregister_sim,
)
from backchannel.backends._sim import request_digest
from backchannel.paradigms.council import load_scenario

SINGLE = "sim/council_single"
POOL = ["sim/council_p1", "sim/council_p2", "sim/council_p3"]
VERIFIER = "sim/council_verifier"
JUDGE = "sim/council_judge"
"""A model `argued` judge: a label of the set drawn by the prompt, or, one time in four, an
answer outside it (a failed verdict, on every retry)."""
MODELS = [SINGLE, *POOL, VERIFIER, JUDGE]
NAMES = {o.id: o.name for s in ("child_welfare", "housing") for o in load_scenario(s).options}
PROFILE_TEXT = {
    "sim/council_p1": "Safety first: protect children from harm and danger.",
    "sim/council_p2": "A novel, creative and innovative idea; try new things.",
    "sim/council_p3": "Be practical: a feasible, workable plan within budget.",
}

captured: list[Request] = []


def respond(request: Request) -> str:
    """Rankings mention option ids and names in their rationale; verifiers score 0.3 or 0.9;
    off-the-record choices and the judge's labels are drawn by the request's digest."""
    captured.append(request)
    constraint = request.constraint
    digest = request_digest(request).hex()
    if isinstance(constraint, JsonSchema) and constraint.name == "ranking":
        value = json.loads(scripted_answer(request))
        first = value["ranking"][0]
        value["rationale"] = f"I put {first} ({NAMES[first]}) first. Note {digest[:10]}."
        return json.dumps(value)
    if isinstance(constraint, JsonSchema) and constraint.name == "verification":
        return json.dumps({"score": 0.9 if int(digest[0], 16) % 2 else 0.3})
    if request.model == JUDGE and isinstance(constraint, LabelSet):
        # Drawn from the prompt, not the request: a retry gets the same answer.
        spin = int(hashlib.blake2b(request.messages[-1].content.encode()).hexdigest()[:4], 16)
        return "perhaps" if spin % 4 == 0 else constraint.labels[spin % len(constraint.labels)]
    if isinstance(constraint, LabelSet):  # an advocate's off-the-record choice
        return constraint.labels[int(digest[:4], 16) % len(constraint.labels)]
    if "one-time grant" in request.messages[-1].content:
        return PROFILE_TEXT.get(request.model, "Nothing in particular.")
    return f"Advocate text {digest[:16]}."


def install() -> None:
    captured.clear()
    for model in MODELS:
        register_sim(model.removeprefix("sim/"), respond)


def uninstall() -> None:
    for model in MODELS:
        unregister_sim(model.removeprefix("sim/"))
