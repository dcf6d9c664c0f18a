"""The dyad view: both roles' aligned ratings before round 1 and after the last round, their
shifts and the gap change, and the interaction states of one conversation.

Ratings are aligned onto the first statement's axis (the paradigm's `align`), so a shift
means the same thing under either wording.
"""

from __future__ import annotations

from typing import Any

from backchannel.paradigms.dyad import Category, Wording, align, interaction_states
from backchannel.view._views import Column, Events, Labels, ParadigmView, register_view

ROLES = ("discussant", "opponent")


def _wording(meta: dict[str, Any]) -> str:
    levels = meta.get("levels")
    wording = levels.get("wording") if isinstance(levels, dict) else None
    return str(wording) if wording in (Wording.FIRST, Wording.OPPOSITE) else Wording.FIRST


def _category(value: Any) -> Category | None:
    return Category(value) if value in {c.value for c in Category} else None


def dyad_metrics(
    meta: dict[str, Any], events: Events, labels: Labels, judge: str | None
) -> dict[str, Any]:
    """pre/post aligned ratings per role, shifts, gap_pre, gap_post, gap_change, states."""
    wording = _wording(meta)
    ratings: dict[str, dict[int, int | None]] = {r: {} for r in ROLES}
    categories: dict[int, dict[str, Category | None]] = {}
    for e in events:
        if e["kind"] == "rating" and e["role"] in ratings:
            value = e["value"]
            ok = e["status"] == "ok" and isinstance(value, int) and not isinstance(value, bool)
            ratings[e["role"]][int(e["round"])] = align(value, wording) if ok else None
        elif e["kind"] == "message" and e["name"] == "turn" and e["role"] in ROLES:
            value = e["value"] if e["status"] == "ok" else None
            categories.setdefault(int(e["round"]), {})[e["role"]] = _category(value)
    rounds = sorted(categories)
    last = max(rounds) if rounds else None
    result: dict[str, Any] = {"aligned": {r: sorted(ratings[r].items()) for r in ROLES}}
    pre = {r: ratings[r].get(0) for r in ROLES}
    post = {r: ratings[r].get(last) if last is not None else None for r in ROLES}
    for r in ROLES:
        result[f"pre_{r}"], result[f"post_{r}"] = pre[r], post[r]
        known = pre[r] is not None and post[r] is not None
        result[f"shift_{r}"] = post[r] - pre[r] if known else None  # type: ignore[operator]
    if None in (*pre.values(), *post.values()):
        result.update(gap_pre=None, gap_post=None, gap_change=None, states=None)
        return result
    gap_pre = abs(pre["discussant"] - pre["opponent"])  # type: ignore[operator]
    gap_post = abs(post["discussant"] - post["opponent"])  # type: ignore[operator]
    path = interaction_states(
        pre["discussant"],  # type: ignore[arg-type]
        pre["opponent"],  # type: ignore[arg-type]
        [(categories[r].get("discussant"), categories[r].get("opponent")) for r in rounds],
    )
    result.update(
        gap_pre=gap_pre,
        gap_post=gap_post,
        gap_change=gap_post - gap_pre,
        states={"discussant": list(path.discussant), "opponent": list(path.opponent)},
    )
    return result


VIEW = register_view(
    ParadigmView(
        "dyad",
        columns=(
            Column("shift_discussant", "shift D", "Discussant's aligned rating, post minus pre"),
            Column("shift_opponent", "shift O", "Opponent's aligned rating, post minus pre"),
            Column("gap_change", "gap change", "|D - O| after the last round minus before round 1"),
        ),
        metrics=dyad_metrics,
    )
)
