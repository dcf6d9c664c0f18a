"""Experiment files: schema, loading with clear errors, and design expansion."""

from backchannel.experiment._design import cell_key, cell_settings, expand, expand_cells
from backchannel.experiment._load import LoadedExperiment, load_experiment, override_models
from backchannel.experiment._schema import EndpointConfig, Experiment, LocalConfig, RetryConfig

__all__ = [
    "EndpointConfig",
    "Experiment",
    "LoadedExperiment",
    "LocalConfig",
    "RetryConfig",
    "cell_key",
    "cell_settings",
    "expand",
    "expand_cells",
    "load_experiment",
    "override_models",
]
