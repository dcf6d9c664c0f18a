"""The dataset card (README.md) of a Hugging Face export: what the tables are, the design, the
models, where the items come from and under which license, and how to cite the run."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables
    from backchannel.interop._provenance import Provenance
    from backchannel.paradigms import Paradigm


def card_text(
    tables: RunTables,
    paradigm: Paradigm[Any] | None,
    splits: Mapping[str, pd.DataFrame],
    found: Provenance,
) -> str:
    """The card as Markdown with its YAML front matter (written with huggingface_hub)."""
    from huggingface_hub import DatasetCard, DatasetCardData

    manifest = tables.manifest
    name = str(manifest.get("name") or manifest.get("run_id") or "run")
    paradigm_name = str(manifest.get("paradigm") or "unknown")
    data = DatasetCardData(
        license=found.license,
        pretty_name=f"{name} ({paradigm_name}, backchannel run)",
        tags=["backchannel", "multi-agent", paradigm_name],
        size_categories=_size_category(len(tables.conversations)),
    )
    body = "\n\n".join(
        [
            f"# {name}: a backchannel run of the `{paradigm_name}` paradigm",
            _summary(tables),
            _tables_section(splits, manifest),
            _design_section(manifest, tables),
            _models_section(tables),
            _items_section(found),
            _cite_section(manifest, paradigm, found),
            _use_section(),
        ]
    )
    card = DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{body}\n")
    return str(card)


def _summary(tables: RunTables) -> str:
    from backchannel.backends import model_caveat

    manifest = tables.manifest
    statuses = tables.conversations["status"].value_counts()
    counts = ", ".join(f"{int(n)} {s}" for s, n in sorted(statuses.items()))
    lines = [
        f"Run `{manifest.get('run_id')}`: {len(tables.conversations)} conversations ({counts}), "
        f"{len(tables.core_events)} events, {len(tables.labels)} judge labels. Every event "
        "records one agent on one channel: `public` (said in the room), `direct` (sent to named "
        "recipients) or `private` (a probe's answer, never seen by any other agent)."
    ]
    state = manifest.get("run_state") or {}
    if state and not state.get("complete", True):
        lines.append(
            f"**The run was not complete when exported** (run_state: `{json.dumps(state)}`)."
        )
    caveat = model_caveat(str(m) for m in tables.core_events["model"].dropna())
    if caveat:
        lines.append(f"**{caveat}**")
    return "\n\n".join(lines)


def _tables_section(splits: Mapping[str, pd.DataFrame], manifest: dict[str, Any]) -> str:
    rows = ["| split | rows | columns |", "|---|---|---|"]
    for split, frame in splits.items():
        columns = ", ".join(f"`{c}`" for c in frame.columns)
        rows.append(f"| {split} | {len(frame)} | {columns} |")
    version = manifest.get("package_version")
    return (
        "## Tables\n\nEach table of the run is one split of the `DatasetDict`, with the same rows "
        "as `backchannel export RUN --format parquet`; `manifest.json` beside it is the run's "
        "manifest (configuration as passed and resolved, versions, seed). The columns are "
        f"documented in backchannel's `docs/data-schema.md` (version {version}); `value` and "
        "`meta` hold JSON text.\n\n" + "\n".join(rows)
    )


def _design_section(manifest: dict[str, Any], tables: RunTables) -> str:
    resolved = manifest.get("config_resolved") or {}
    levels = resolved.get("factors") or {}
    lines = ["## Design", ""]
    if levels:
        lines += ["| factor | levels |", "|---|---|"]
        lines += [f"| {f} | {', '.join(map(str, v))} |" for f, v in levels.items()]
        lines.append("")
    cells = tables.conversations["cell_key"].nunique()
    items = tables.conversations["item_id"].nunique()
    lines.append(
        f"{cells} cells × {items} items × {resolved.get('replicates', 1)} replicate(s); "
        f"experiment seed {manifest.get('seed')} (each conversation's seed is derived from it "
        "and stored in `conversations.seed`)."
    )
    if resolved.get("exclude"):
        lines.append(f"Excluded cells: `{json.dumps(resolved['exclude'])}`.")
    return "\n".join(lines)


def _models_section(tables: RunTables) -> str:
    events = tables.core_events
    calls = events[events["model"].astype("str").fillna("") != ""]
    lines = [
        "## Models",
        "",
        "| model | calls | prompt tokens | completion tokens |",
        "|---|---|---|---|",
    ]
    for model, group in calls.groupby("model", sort=True):
        lines.append(
            f"| {model} | {len(group)} | {int(group['prompt_tokens'].sum())} | "
            f"{int(group['completion_tokens'].sum())} |"
        )
    judges = sorted(
        {f"{j} ({m})" for j, m in zip(tables.labels["judge"], tables.labels["model"], strict=True)}
    )
    if judges:
        lines += ["", f"Judges (name and model): {', '.join(judges)}."]
    return "\n".join(lines)


def _items_section(found: Provenance) -> str:
    lines = ["## Items and their license", ""]
    if not found.sources and not found.undocumented:
        return "\n".join([*lines, "The run has no items."])
    for source in found.sources:
        licenses = ", ".join(source.licenses) or "not stated in its provenance file"
        lines += [
            f"### {source.name} ({source.items} item(s); license: {licenses})",
            "",
            f"Shipped with backchannel ({source.where}); its provenance file says:",
            "",
            *(f"> {line}" if line else ">" for line in source.provenance.strip().splitlines()),
            "",
        ]
    if found.undocumented:
        shown = ", ".join(f"`{i}`" for i in found.undocumented[:10])
        more = f" and {len(found.undocumented) - 10} more" if len(found.undocumented) > 10 else ""
        lines += [
            f"{len(found.undocumented)} item(s) ({shown}{more}) come from no dataset the package "
            "documents: they were written in the experiment file, in the paradigm, or read from "
            "a file you gave. Their license is their author's: state it here and in the "
            "`license` field above before publishing.",
        ]
    lines += [
        "",
        f"The card's `license` field is `{found.license}`: the documented sources' license when "
        "they all agree and cover every item, else `other`. The conversations themselves are "
        "model outputs; check the terms of the models you used.",
    ]
    return "\n".join(lines)


def _cite_section(
    manifest: dict[str, Any], paradigm: Paradigm[Any] | None, found: Provenance
) -> str:
    commit = manifest.get("git_commit")
    at = f", git commit `{commit}`" + (" (dirty tree)" if manifest.get("git_dirty") else "")
    lines = [
        "## How to cite",
        "",
        f"- The run: `{manifest.get('run_id')}` (experiment `{manifest.get('name')}`, "
        f"fingerprint `{manifest.get('fingerprint')}`), made with backchannel "
        f"{manifest.get('package_version')}{at if commit else ''}.",
    ]
    study = paradigm.study() if paradigm is not None else None
    if study is not None:
        lines.append(
            f"- The study the `{paradigm.name if paradigm else ''}` paradigm follows: "
            f"{' '.join(study.citation.split())}"
        )
    for source in found.sources:
        lines.append(f"- The items of {source.name}: as their provenance file above says.")
    return "\n".join(lines)


def _use_section() -> str:
    return (
        "## Loading and publishing\n\n"
        '```python\nimport datasets\n\nrun = datasets.load_from_disk("THIS_FOLDER")\n'
        'run["events"].to_pandas()\n```\n\n'
        "backchannel does not upload anything. To publish, push with your own Hugging Face "
        'tools, e.g. `datasets.load_from_disk("THIS_FOLDER").push_to_hub("you/name")`, then '
        "this card with `huggingface-cli upload you/name THIS_FOLDER/README.md README.md "
        "--repo-type dataset`."
    )


def _size_category(n: int) -> str:
    if n < 1000:
        return "n<1K"
    if n < 10_000:
        return "1K<n<10K"
    if n < 100_000:
        return "10K<n<100K"
    return "100K<n<1M" if n < 1_000_000 else "n>1M"
