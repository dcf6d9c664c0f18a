"""The checks every paradigm must pass, for a plugin author's own tests as for the built-ins.

`check_paradigm(experiment, workdir, factors=...)` runs the experiment on a scripted backend and
returns a list of problems (empty when all hold):
- the call estimate equals the requests the run made;
- a resumed run stores exactly the events of an uninterrupted one;
- no private answer appears in any later prompt of its conversation;
- metrics are typed results, and every factor given (a setting with two levels) separates:
  each per-cell table has rows for both levels, and nothing averages over a factor unnamed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

VOLATILE = ("latency_s", "cached")
"""Event columns that differ between two runs of the same calls."""
MIN_LEAK_TEXT = 24
"""Private answers shorter than this (a label, a number) are too common to search for."""


def check_paradigm(
    experiment: str | Path,
    workdir: str | Path,
    *,
    factors: Mapping[str, Sequence[Any]] | None = None,
    model: str = "sim",
    limit: int | None = 8,
) -> list[str]:
    """Problems found running `experiment` on `model` (default the built-in `sim`) under
    `workdir`; `factors` maps settings to two levels each, every one tried as a factor."""
    from backchannel.orchestration import load_experiment

    root = Path(workdir)
    root.mkdir(parents=True, exist_ok=True)
    loaded = load_experiment(experiment, model=model)
    problems = _run_checks(loaded, root / "base", limit)
    for name, levels in (factors or {}).items():
        problems += _factor_check(experiment, model, root / f"factor-{name}", name, list(levels))
    return problems


def _run_checks(loaded: Any, directory: Path, limit: int | None) -> list[str]:
    from backchannel import orchestration
    from backchannel.orchestration import run

    problems: list[str] = []
    whole = run(loaded, directory / "whole", limit=limit)
    estimated = orchestration.plan(loaded, limit).estimate(only_todo=False)["calls"]
    made = _requests(whole.path)
    if estimated != made:
        problems.append(f"the estimate says {estimated} calls, the run made {made}")
    half = max(1, (limit or len(orchestration.plan(loaded).specs)) // 2)
    run(loaded, directory / "resumed", limit=half)
    resumed = run(loaded, directory / "resumed", limit=limit)
    problems += _event_differences(whole.tables.events, resumed.tables.events)
    problems += _prompt_differences(whole.tables.prompts, resumed.tables.prompts)
    problems += _leaks(whole.tables.events, whole.tables.prompts)
    return problems


def _requests(directory: Path) -> int:
    """Requests a stored run made, cache hits included, re-asks left out (as estimated)."""
    from backchannel.store import RunStore

    store = RunStore(directory, readonly=True)
    try:
        total = store.usage().total()
    finally:
        store.close()
    return total.calls - total.reasks


def _event_differences(first: pd.DataFrame, second: pd.DataFrame) -> list[str]:
    """Events of two runs of the same plan that differ, apart from timings and retries."""
    keys = ["conversation_id", "seq"]

    def comparable(events: pd.DataFrame) -> pd.DataFrame:
        frame = events.drop(columns=[c for c in (*VOLATILE, "run_id") if c in events])
        meta = [json.dumps(_steady(m), sort_keys=True) for m in frame["meta"]]
        return frame.assign(meta=meta).sort_values(keys).reset_index(drop=True)

    a, b = comparable(first), comparable(second)
    if len(a) != len(b):
        return [f"a resumed run stored {len(b)} events where an uninterrupted one stored {len(a)}"]
    differing = (a != b) & ~(a.isna() & b.isna())
    rows = differing.any(axis=1)
    if not rows.any():
        return []
    where = a.loc[rows, keys].iloc[0].tolist()
    columns = [c for c in a.columns if differing.loc[rows, c].any()]
    return [
        f"a resumed run differs from an uninterrupted one in {int(rows.sum())} events "
        f"(first: conversation {where[0]}, seq {where[1]}; columns {', '.join(columns)})"
    ]


def _prompt_differences(first: pd.DataFrame, second: pd.DataFrame) -> list[str]:
    """Calls of two runs of the same plan whose prompts differ."""
    keys = ["conversation_id", "seq"]
    a = first.set_index(keys)["prompt"].sort_index()
    b = second.set_index(keys)["prompt"].sort_index()
    if not a.index.equals(b.index):
        return [f"a resumed run stored {len(b)} prompts where an uninterrupted one stored {len(a)}"]
    differing = a[a != b]
    if differing.empty:
        return []
    where = differing.index[0]
    return [
        f"a resumed run sent {len(differing)} prompts unlike an uninterrupted one's (first: "
        f"conversation {where[0]}, seq {where[1]})"
    ]


def _steady(meta: Any) -> Any:
    decoded = json.loads(meta) if isinstance(meta, str) and meta else meta
    if isinstance(decoded, dict):
        return {k: v for k, v in decoded.items() if k not in ("retries", "timings")}
    return decoded


def _leaks(events: pd.DataFrame, prompts: pd.DataFrame) -> list[str]:
    """Private answers that appear in a later prompt of the same conversation."""
    found: list[str] = []
    sent: dict[Any, list[tuple[int, str]]] = {}
    for cid, seq, prompt in prompts[["conversation_id", "seq", "prompt"]].itertuples(index=False):
        sent.setdefault(cid, []).append((int(seq), _prompt_text(prompt)))
    for conversation, group in events.groupby("conversation_id", sort=False):
        prompts_of = sent.get(conversation, [])
        private = group[(group["channel"] == "private") & (group["status"] == "ok")]
        for seq, text in zip(private["seq"], private["text"], strict=True):
            text = str(text).strip()
            if len(text) < MIN_LEAK_TEXT:
                continue
            later = [s for s, prompt in prompts_of if s > int(seq) and text in prompt]
            if later:
                found.append(
                    f"conversation {conversation}: the private answer of event {seq} appears "
                    f"in the prompt of event {later[0]}"
                )
    return found


def _prompt_text(stored: Any) -> str:
    """The text of a call's stored prompt (JSON of [[role, content], ...])."""
    prompt = json.loads(stored) if isinstance(stored, str) and stored else stored
    if isinstance(prompt, list):
        return "\n".join(str(m[-1]) for m in prompt if isinstance(m, list | tuple) and m)
    return str(prompt or "")


def _factor_check(
    experiment: str | Path, model: str, directory: Path, name: str, levels: list[Any]
) -> list[str]:
    from backchannel.analysis import Design, Metrics, separation_problems
    from backchannel.orchestration import load_experiment, run

    if len(levels) != 2 or levels[0] == levels[1]:
        return [f"factor {name}: give two distinct levels, got {levels!r}"]
    loaded = load_experiment(experiment, model=model)
    factors = {**loaded.experiment.factors, name: levels}
    varied = loaded.experiment.model_copy(update={"factors": factors})
    loaded.paradigm.check_factors(list(factors))
    loaded = type(loaded)(loaded.path, loaded.text, varied, loaded.paradigm, loaded.settings)
    from backchannel import orchestration

    cells = len({s.cell_key for s in orchestration.plan(loaded).specs})
    stored = run(loaded, directory, limit=2 * cells)
    metrics = stored.metrics()
    if not isinstance(metrics, Metrics):
        return [f"factor {name}: metrics are not typed results (a backchannel.Metrics model)"]
    design = Design.of(stored.tables)
    problems = [f"factor {name}: {p}" for p in separation_problems(metrics, design)]
    rows = [row for _, value in metrics.sections() for row in _rows(value)]
    if not rows:
        return [*problems, f"factor {name}: the metrics have no per-cell rows"]
    seen = {json.dumps(row.cell.get(name), sort_keys=True, default=str) for row in rows}
    wanted = {json.dumps(level, sort_keys=True, default=str) for level in levels}
    if not wanted <= seen:
        problems.append(
            f"factor {name}: per-cell rows show levels {sorted(seen)}, not both of {levels!r}"
        )
    return problems


def _rows(value: Any) -> list[Any]:
    from pydantic import BaseModel

    from backchannel.analysis import CellRow

    if isinstance(value, CellRow):
        return [value]
    if isinstance(value, BaseModel):
        return [r for f in type(value).model_fields for r in _rows(getattr(value, f))]
    if isinstance(value, Mapping):
        return [r for v in value.values() for r in _rows(v)]
    if isinstance(value, list | tuple):
        return [r for v in value for r in _rows(v)]
    return []
