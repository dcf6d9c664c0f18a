"""Reading an experiment file: YAML -> validated Experiment + paradigm settings, with errors that
name the file, the field path and what is allowed.

The file is read defensively: a size bound, UTF-8 only, duplicate keys refused with their line,
a bound on the values YAML aliases expand to, endpoint URLs and keys checked, and relative data
file paths resolved against the experiment file's folder.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from backchannel._files import path_problem
from backchannel.backends import redact_userinfo, url_problem
from backchannel.errors import ConfigError
from backchannel.experiment._redact import redact_resolved
from backchannel.experiment._schema import Experiment
from backchannel.paradigms import Paradigm, get_paradigm, is_model_key

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Experiment files above this size are refused (large item lists belong in a data file)."""
MAX_NODES = 100_000
"""The most YAML values a file may expand to once aliases are followed."""
_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".csv", ".tsv", ".gz", ".parquet")


@dataclass(frozen=True)
class LoadedExperiment:
    """The experiment as passed (text), as resolved, its paradigm and validated settings."""

    path: Path
    text: str
    experiment: Experiment
    paradigm: Paradigm
    settings: BaseModel

    def resolved(self) -> dict[str, Any]:
        """The configuration as run, as the manifest stores it: defaults filled in, overrides
        applied, secrets removed (by field name and by the look of the value)."""
        return redact_resolved(self.as_run())

    def as_run(self) -> dict[str, Any]:
        """The configuration as run with only literal endpoint keys and URL user-info left out:
        what the run's fingerprint is computed from (so runs started before secrets were also
        found by name and look still resume). Never written anywhere."""
        data = self.experiment.model_dump(mode="json")
        data["settings"] = self.settings.model_dump(mode="json")
        for endpoint in data["endpoints"]:
            endpoint.pop("api_key", None)
            if isinstance(endpoint.get("base_url"), str):
                endpoint["base_url"] = redact_userinfo(endpoint["base_url"])
            if isinstance(endpoint.get("base_urls"), list):
                endpoint["base_urls"] = [redact_userinfo(u) for u in endpoint["base_urls"]]
        if data.get("population") is None:  # only runs on sim/population set it
            data.pop("population", None)
        return data


def _read_text(path: Path) -> str:
    """The file's text, refused with a clear message when it is too large or not UTF-8."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ConfigError(
                f"{path}: the experiment file is {size / 1e6:.1f} MB, above the "
                f"{MAX_FILE_BYTES // (1024 * 1024)} MiB limit; put long item lists in a data file"
            )
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the experiment file: {error.strerror}") from None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ConfigError(f"{path}: the experiment file is UTF-16 text; save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"{path}: the experiment file is not UTF-8 text (byte {data[error.start]:#04x} at "
            f"offset {error.start}); save it as UTF-8"
        ) from None
    if "\x00" in text:
        raise ConfigError(f"{path}: the experiment file holds NUL bytes; save it as UTF-8 text")
    return text


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys (YAML would silently keep the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
                seen[key] = line
            except TypeError:
                continue  # an unhashable key: the constructor reports it
            if first is not None:
                raise ConfigError(
                    f"duplicate key {key!r} at line {line} (first at line {first}); keep one"
                )
        return super().construct_mapping(node, deep=deep)


def _expanded_size(root: yaml.Node) -> int:
    """How many values the document has with every alias followed, computed without expanding
    (each node's size is memoised, so a "billion laughs" file costs its own size to check)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = 1
            continue
        children: list[yaml.Node] = (
            [part for pair in node.value for part in pair]
            if isinstance(node, yaml.MappingNode)
            else list(node.value)
        )
        if children_done:
            total = 1 + sum(sizes.get(id(child), 0) for child in children)
            sizes[id(node)] = min(total, MAX_NODES + 1)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def _parse_yaml(path: Path, text: str) -> Any:
    try:
        root = yaml.compose(text, Loader=_StrictLoader)
        if root is None:
            return None
        if _expanded_size(root) > MAX_NODES:
            raise ConfigError(
                f"{path}: the experiment file expands to more than {MAX_NODES} values through YAML "
                "aliases; write the values out or use fewer aliases"
            )
        loader = _StrictLoader(text)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except ConfigError as error:
        message = str(error)
        if not message.startswith(str(path)):
            message = f"{path}: {message}"
        raise ConfigError(message) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = error.problem or error.context or "syntax error"
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}; fix the syntax") from None
    except (yaml.YAMLError, RecursionError) as error:
        raise ConfigError(f"{path}: not valid YAML: {error}; fix the syntax") from None


def _check_endpoints(path: Path, raw: dict[str, Any]) -> None:
    """Base URLs must be http(s) URLs with a valid port; literal keys must be one line."""
    endpoints = raw.get("endpoints")
    if not isinstance(endpoints, list):
        return
    for index, endpoint in enumerate(endpoints):
        if not isinstance(endpoint, dict):
            continue
        where = f"{path}: invalid experiment file: endpoints.{index}"
        url = endpoint.get("base_url")
        if isinstance(url, str):
            problem = url_problem(url)
            if problem:
                raise ConfigError(f"{where}.base_url: {problem}")
        key = endpoint.get("api_key")
        if isinstance(key, str):
            stripped = key.strip()
            if not stripped or any(c.isspace() for c in stripped):
                raise ConfigError(
                    f"{where}.api_key: the key is empty or holds spaces or line breaks; give it "
                    "on one line (better: name an environment variable with api_key_env)"
                )
            endpoint["api_key"] = stripped  # `api_key: |` leaves a trailing line break


def _resolve_paths(value: Any, base: Path, key: str = "") -> Any:
    """Relative data file paths resolve against the experiment file's folder: values under a
    `path` (or `*_path`) key, and list entries that name a file by its extension."""
    if isinstance(value, dict):
        return {k: _resolve_paths(v, base, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [
            _resolve_path(v, base)
            if isinstance(v, str) and v.lower().endswith(_FILE_SUFFIXES)
            else _resolve_paths(v, base, key)
            for v in value
        ]
    if isinstance(value, str) and (key == "path" or key.endswith("_path")):
        return _resolve_path(value, base)
    return value


def _resolve_path(value: str, base: Path) -> str:
    expanded = os.path.expanduser(value)
    if not value or os.path.isabs(expanded) or re.match(r"^[a-z][a-z0-9+.-]*://", value):
        return expanded
    return str(base / expanded)


def _format_errors(path: Path, error: ValidationError, prefix: tuple[Any, ...] = ()) -> str:
    """One line: the file, then every wrong field with what is wrong, separated by "; "."""
    parts = []
    for item in error.errors():
        location = ".".join(str(part) for part in (*prefix, *item["loc"]))
        message = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
            message = "unknown field (check the spelling against the documentation)"
        elif item["type"] in ("literal_error", "enum"):
            expected = item.get("ctx", {}).get("expected")
            message = f"{message}" if expected is None else f"must be one of {expected}"
        parts.append(f"{location or '(top level)'}: {message}")
    return f"{path}: invalid experiment file: " + "; ".join(parts)


def override_models(value: Any, model: str | Callable[[str], str], key: str = "") -> Any:
    """Replace every model string (values under model keys) with `model`, or with what
    `model(string)` gives for it."""
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
        return model if isinstance(model, str) else model(value)
    return value


def _model_strings(value: Any, found: list[str], key: str = "") -> list[str]:
    """Every model string under a model key, in order of first appearance."""
    if isinstance(value, dict):
        for k, v in value.items():
            _model_strings(v, found, str(k))
    elif isinstance(value, list):
        for v in value:
            _model_strings(v, found, key)
    elif isinstance(value, str) and is_model_key(key) and value not in found:
        found.append(value)
    return found


def simulated_names(models: Sequence[str], simulated: str) -> dict[str, str]:
    """Each distinct model -> its own simulated model, so a design keeps its cells: one model
    becomes `simulated` itself, several become `simulated#<name>` (the name without its
    provider, or the whole model string where two names would clash)."""
    if len(models) <= 1:
        return {m: simulated for m in models}
    labels = [m.partition("/")[2] or m for m in models]
    clash = {label for label in labels if labels.count(label) > 1}
    return {
        m: f"{simulated}#{m if label in clash else label}"
        for m, label in zip(models, labels, strict=True)
    }


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
            raise ConfigError(f"{path}: invalid experiment file: {location}: {error}") from None


def load_experiment(path: Path, *, model_override: str | None = None) -> LoadedExperiment:
    """Read, validate and resolve an experiment file."""
    problem = path_problem(path)
    if problem == "is a directory":
        raise ConfigError(f"{path} is a directory; give the experiment file (YAML) inside it")
    if problem is not None and problem.startswith("does not exist"):
        raise ConfigError(f"{path}: no such experiment file; check the path")
    if problem is not None:
        raise ConfigError(
            f"{path} {problem}; give the path of an experiment file (YAML) saved on disk"
        )
    text = _read_text(path)
    raw = _parse_yaml(path, text)
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the experiment file must be a mapping of fields")
    raw = copy.deepcopy(raw)
    _check_endpoints(path, raw)
    if isinstance(raw.get("settings"), dict):
        raw["settings"] = _resolve_paths(raw["settings"], path.resolve().parent)
    if model_override is not None:
        from backchannel.backends import check_model, is_simulated

        check_model(model_override)
        names: dict[str, str] = {}
        if is_simulated(model_override):
            found = _model_strings(raw.get("factors", {}), [])
            found = _model_strings(raw.get("settings", {}), found)
            names = simulated_names(found, model_override)
        replacement = (lambda m: names.get(m, m)) if names else model_override
        raw["factors"] = override_models(raw.get("factors", {}), replacement)
        raw["settings"] = override_models(raw.get("settings", {}), replacement)
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
                f"{path}: invalid experiment file: exclude.{index}: names unknown factors "
                f"{unknown}; factors are {sorted(experiment.factors)}"
            )
    try:
        paradigm = get_paradigm(experiment.paradigm)
    except ConfigError as error:
        raise ConfigError(f"{path}: paradigm: {error}") from None
    try:
        settings = paradigm.Settings.model_validate(experiment.settings)
        if model_override is not None:
            # Defaults the file left out (a paradigm's default model) become the override; the
            # models already given their simulated names stay.
            chosen = set(names.values())
            filled = override_models(
                settings.model_dump(mode="json"),
                (lambda m: m if m in chosen else model_override) if chosen else model_override,
            )
            settings = paradigm.Settings.model_validate(filled)
    except ValidationError as error:
        raise ConfigError(_format_errors(path, error, ("settings",))) from None
    if experiment.population is not None:
        # The sections and fields the paradigm's simulated population reads, defaults filled in.
        try:
            population = paradigm.population_book().resolve(experiment.population)
        except ValidationError as error:
            raise ConfigError(_format_errors(path, error, ("population",))) from None
        except ValueError as error:
            raise ConfigError(f"{path}: invalid experiment file: {error}") from None
        experiment = experiment.model_copy(update={"population": population})
    return LoadedExperiment(path, text, experiment, paradigm, settings)
