"""Experiment files: schema, loading with clear errors, and design expansion."""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.experiment._design import (
        Expansion,
        cell_key,
        cell_settings,
        expand,
        expand_cells,
        expand_design,
    )
    from backchannel.experiment._generation import GenerationConfig, ThinkTagsConfig
    from backchannel.experiment._load import LoadedExperiment, load_experiment, override_models
    from backchannel.experiment._redact import looks_like_key, redact, redact_resolved
    from backchannel.experiment._schema import Experiment

__all__ = [
    "Expansion",
    "Experiment",
    "GenerationConfig",
    "LoadedExperiment",
    "ThinkTagsConfig",
    "cell_key",
    "cell_settings",
    "expand",
    "expand_cells",
    "expand_design",
    "load_experiment",
    "looks_like_key",
    "override_models",
    "redact",
    "redact_resolved",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._design": (
                "Expansion",
                "cell_key",
                "cell_settings",
                "expand",
                "expand_cells",
                "expand_design",
            ),
            "._generation": ("GenerationConfig", "ThinkTagsConfig"),
            "._load": ("LoadedExperiment", "load_experiment", "override_models"),
            "._redact": ("looks_like_key", "redact", "redact_resolved"),
            "._schema": ("Experiment",),
        },
    )
