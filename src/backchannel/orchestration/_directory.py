"""The run directory, where the run's store stage writes: created for a new run, reopened to
resume the same experiment (recognised by its fingerprint), refused when it holds another
experiment or another process is writing it."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from backchannel.errors import RunDirectoryError
from backchannel.experiment import LoadedExperiment, redact
from backchannel.orchestration._checks import check_cache
from backchannel.orchestration._plan import Plan
from backchannel.store import CACHE_NAME, DATABASE_NAME, RunStore, lock_held

# Fields that change no model output: a resumed run may change them (a new base_url after the
# server moved, a lower max_in_flight after rate limits) without becoming another experiment.
_TRANSPORT_FIELDS = (
    "base_url",
    "base_urls",
    "api_key_env",
    "max_in_flight",
    "adaptive_in_flight",
    "min_in_flight",
    "timeout_s",
    "price",
)


def fingerprint(loaded: LoadedExperiment) -> str:
    """A hash of everything that changes what the run asks and stores (not how it connects)."""
    resolved = loaded.as_run()
    resolved.pop("name", None)
    resolved.pop("retry", None)
    resolved.pop("local", None)
    resolved.pop("max_conversations", None)  # a ceiling on the design, not part of it
    # How many replicates run, not what any asks: the manifest's `stopping` record holds it.
    resolved.pop("stopping", None)
    for endpoint in resolved.get("endpoints", []):
        for name in _TRANSPORT_FIELDS:
            endpoint.pop(name, None)
        if not endpoint.get("extra_body"):
            endpoint.pop("extra_body", None)
    # Left out when unused, so runs started before these settings existed still resume.
    if not resolved.get("generation"):
        resolved.pop("generation", None)
    if resolved.get("population") is None:
        resolved.pop("population", None)
    payload = json.dumps(resolved, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def record_plan(store: RunStore, the_plan: Plan) -> None:
    """Note in the manifest how many conversations this invocation means to store, and the
    rows of the data that became none (`skipped_items`, each with its reason)."""
    store.record_plan(len(the_plan.specs))
    store.write_manifest({"skipped_items": [s.as_dict() for s in the_plan.skipped]})


def _different_experiment(directory: Path, manifest: dict[str, Any]) -> RunDirectoryError:
    return RunDirectoryError(
        f"{directory} holds a run of a different experiment "
        f"({manifest.get('experiment_path')}, {manifest.get('name')!r}); "
        "resume it with the same file and --model, or pass a new -o directory"
    )


def _busy(directory: Path) -> RunDirectoryError:
    return RunDirectoryError(
        f"another backchannel process is running in {directory}; wait for it to finish (or stop "
        "it) before running or resuming here"
    )


def open_run_directory(directory: Path, loaded: LoadedExperiment) -> RunStore:
    """Create the run directory, or reopen it to resume; refuse a different experiment."""
    if directory.exists() and not directory.is_dir():
        raise RunDirectoryError(f"{directory} is a file; pass a directory with -o")
    check_cache(directory / CACHE_NAME)
    exists = (directory / DATABASE_NAME).exists()
    if not exists and directory.exists() and any(directory.iterdir()):
        raise RunDirectoryError(
            f"{directory} exists and is not a run directory; choose an empty or new directory"
        )
    print_ = fingerprint(loaded)
    if exists:
        # Checked before the store is opened at all: a directory another process runs in is
        # not touched (not its database, its log or the log's index).
        if lock_held(directory):
            raise _busy(directory)
        # Checked read-only: a run directory of another experiment is not written.
        reader = RunStore(directory, readonly=True)
        try:
            stored = reader.manifest()
        finally:
            reader.close()
        if stored and stored.get("fingerprint") != print_:
            raise _different_experiment(directory, stored)
    store = RunStore(directory, create=True)
    try:
        store.lock()
    except RunDirectoryError:
        store.close()
        raise
    manifest = store.manifest()
    if manifest:
        if manifest.get("fingerprint") != print_:
            store.close()
            raise _different_experiment(directory, manifest)
        return store
    from backchannel._provenance import provenance

    store.write_manifest(
        {
            "manifest_version": 1,
            "run_id": f"{loaded.experiment.name}-{print_[:12]}",
            "name": loaded.experiment.name,
            "paradigm": loaded.experiment.paradigm,
            "experiment_path": str(loaded.path),
            "config_as_passed": redact(loaded.text),
            "config_resolved": loaded.resolved(),
            "fingerprint": print_,
            "seed": loaded.experiment.seed,
            "factors": list(loaded.experiment.factors),
            "prompt_templates": loaded.paradigm.templates(),
            "created_at": time.time(),
            **provenance(),
        }
    )
    return store
