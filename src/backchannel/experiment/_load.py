"""Reading an experiment file: YAML -> validated Experiment + paradigm settings, with errors that
name the file, the field path and what is allowed."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from backchannel.errors import ConfigError
from backchannel.experiment._schema import Experiment
from backchannel.paradigms import Paradigm, get_paradigm, is_model_key


@dataclass(frozen=True)
class LoadedExperiment:
    """The experiment as passed (text), as resolved, its paradigm and validated settings."""

    path: Path
    text: str
    experiment: Experiment
    paradigm: Paradigm
    settings: BaseModel

    def resolved(self) -> dict[str, Any]:
        """The configuration as run: defaults filled in, overrides applied, secrets removed."""
        data = self.experiment.model_dump(mode="json")
        data["settings"] = self.settings.model_dump(mode="json")
        for endpoint in data["endpoints"]:
            endpoint.pop("api_key", None)
        return data


def _format_errors(path: Path, error: ValidationError, prefix: tuple[Any, ...] = ()) -> str:
    lines = [f"{path}: invalid experiment file"]
    for item in error.errors():
        location = ".".join(str(part) for part in (*prefix, *item["loc"]))
        message = item["msg"]
        if item["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
            message = "unknown field (check the spelling against the documentation)"
        elif item["type"] in ("literal_error", "enum"):
            expected = item.get("ctx", {}).get("expected")
            message = f"{message}" if expected is None else f"must be one of {expected}"
        lines.append(f"  {location or '(top level)'}: {message}")
    return "\n".join(lines)


def override_models(value: Any, model: str, key: str = "") -> Any:
    """Replace every model string (values under model keys) with `model`."""
    if isinstance(value, dict):
        return {k: override_models(v, model, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        if is_model_key(key):
            replaced = [override_models(v, model, key) for v in value]
            unique: list[Any] = []
            for v in replaced:
                if v not in unique:
                    unique.append(v)
            return unique
        return [override_models(v, model, key) for v in value]
    if isinstance(value, str) and is_model_key(key):
        return model
    return value


def _check_models(path: Path, value: Any, location: str, key: str = "") -> None:
    """Every model string (a value under a model key) must be `provider/model`."""
    from backchannel.backends import check_model

    if isinstance(value, dict):
        for k, v in value.items():
            _check_models(path, v, f"{location}.{k}", str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_models(path, v, f"{location}.{i}", key)
    elif isinstance(value, str) and is_model_key(key):
        try:
            check_model(value)
        except ConfigError as error:
            raise ConfigError(f"{path}: invalid experiment file\n  {location}: {error}") from None


def load_experiment(path: Path, *, model_override: str | None = None) -> LoadedExperiment:
    """Read, validate and resolve an experiment file."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such experiment file")
    text = path.read_text(encoding="utf-8")
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from error
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the experiment file must be a mapping of fields")
    raw = copy.deepcopy(raw)
    if model_override is not None:
        from backchannel.backends import check_model

        check_model(model_override)
        raw["factors"] = override_models(raw.get("factors", {}), model_override)
        raw["settings"] = override_models(raw.get("settings", {}), model_override)
    try:
        experiment = Experiment.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(_format_errors(path, error)) from None
    _check_models(path, experiment.factors, "factors")
    _check_models(path, experiment.settings, "settings")
    for index, rule in enumerate(experiment.exclude):
        unknown = sorted(set(rule) - set(experiment.factors))
        if unknown:
            raise ConfigError(
                f"{path}: invalid experiment file\n  exclude.{index}: names unknown factors "
                f"{unknown}; factors are {sorted(experiment.factors)}"
            )
    try:
        paradigm = get_paradigm(experiment.paradigm)
    except ConfigError as error:
        raise ConfigError(f"{path}: paradigm: {error}") from None
    try:
        settings = paradigm.Settings.model_validate(experiment.settings)
        if model_override is not None:
            # Defaults the file left out (a paradigm's default model) are overridden too.
            filled = override_models(settings.model_dump(mode="json"), model_override)
            settings = paradigm.Settings.model_validate(filled)
    except ValidationError as error:
        raise ConfigError(_format_errors(path, error, ("settings",))) from None
    return LoadedExperiment(path, text, experiment, paradigm, settings)
