"""Experiment files: schema, loading with clear errors, and design expansion."""

from backchannel.experiment._design import cell_key, cell_settings, expand, expand_cells
from backchannel.experiment._generation import GenerationConfig, ThinkTagsConfig
from backchannel.experiment._load import LoadedExperiment, load_experiment, override_models
from backchannel.experiment._redact import looks_like_key, redact
from backchannel.experiment._schema import Experiment

__all__ = [
    "Experiment",
    "GenerationConfig",
    "LoadedExperiment",
    "ThinkTagsConfig",
    "cell_key",
    "cell_settings",
    "expand",
    "expand_cells",
    "load_experiment",
    "looks_like_key",
    "override_models",
    "redact",
]
