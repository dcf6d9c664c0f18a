"""`sim/population`: a simulated population whose behaviour follows documented stochastic rules
with planted parameters, so every metric can be checked against a known answer.

The rules are not here: each paradigm declares its own (`Paradigm.population`, keyed by its
prompt names), the datasets layer those of the screening question. A run binds its paradigm's
rules to the experiment file's `population:` section (one section per set of rules, `models:`
overriding them per simulated model, `sim/population#<label>`); each request is answered by the
rule its call information names, else by the built-in scripted answer (see docs/population.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from backchannel.backends._pop_hook import Population, PopulationCall, Rule
from backchannel.backends._sim import scripted_answer
from backchannel.backends._types import CallInfo, RawCompletion, Request

POPULATION = "population"
MODELS = "models"


class PopulationParams(BaseModel):
    """The `population:` section as written: one mapping per set of rules (named after the
    paradigm that declares them), and `models`, which maps a label (the part after `#` in
    `sim/population#<label>`, or the whole model string) to sections that override the shared
    ones field by field. Which sections exist, and their fields, the run's rules say
    (`PopulationBook.resolve`)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, dict[str, Any]] = Field(init=False)

    models: dict[str, dict[str, dict[str, Any]]] = Field(default_factory=dict)

    def sections(self) -> dict[str, dict[str, Any]]:
        """The sections as written, by name (without `models`)."""
        return dict(self.__pydantic_extra__ or {})


@dataclass(frozen=True)
class PopulationBook:
    """The rules one client answers with, by section name: the run's paradigm's, or a layer's
    (the screening question's). A call is answered by the one rule its `CallInfo` names."""

    sections: Mapping[str, Population[Any]] = field(default_factory=dict)
    _model: type[BaseModel] = field(init=False, repr=False, compare=False)
    _fields: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sections = dict(self.sections)
        if MODELS in sections:
            raise ValueError(f"a population section may not be named {MODELS!r}")
        # Sections are fields under their names as aliases, so any name works (even `schema`).
        names = {name: f"section_{index}" for index, name in enumerate(sections)}
        fields: dict[str, Any] = {
            names[name]: (hook.params, Field(default_factory=hook.params, alias=name))
            for name, hook in sections.items()
        }
        model = create_model(
            "Population",
            __config__=ConfigDict(extra="forbid"),
            models=(dict[str, dict[str, dict[str, Any]]], Field(default_factory=dict)),
            **fields,
        )
        object.__setattr__(self, "sections", sections)
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_fields", names)

    @classmethod
    def of(cls, name: str, population: Population[Any] | None) -> PopulationBook:
        """The book of one paradigm: its rules under its name (none: only the scripted answer)."""
        return cls({} if population is None else {name: population})

    def readable(self, params: PopulationParams) -> PopulationParams:
        """`params` without the sections these rules do not read (a run's recorded section may
        hold sections of other rules, as the section was recorded by earlier versions)."""
        keep = set(self.sections)
        sections = {name: value for name, value in params.sections().items() if name in keep}
        models = {
            label: {name: value for name, value in override.items() if name in keep}
            for label, override in params.models.items()
        }
        return PopulationParams.model_validate({**sections, MODELS: models})

    def resolve(self, params: PopulationParams | None) -> PopulationParams:
        """The section with every field filled in; raises ValidationError for an unknown section
        or field (locations relative to `population:`), ValueError for a bad override."""
        raw = {} if params is None else params.model_dump()
        resolved = self._validate(raw)
        for label, override in resolved.models.items():
            try:
                self._validate(_merged(raw, override))
            except ValidationError as error:
                first = error.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                raise ValueError(f"population.models.{label}.{where}: {first['msg']}") from None
        return PopulationParams.model_validate(resolved.model_dump(mode="json", by_alias=True))

    def rule(self, info: CallInfo) -> tuple[str, Rule[Any]] | None:
        """(section, rule) of the one rule that answers a call, if any."""
        for name, hook in self.sections.items():
            found = hook.rule_for(info)
            if found is not None:
                return name, found
        return None

    def _validate(self, raw: Mapping[str, Any]) -> Any:
        return self._model.model_validate(dict(raw))

    def _section(self, validated: Any, name: str) -> BaseModel:
        section: BaseModel = getattr(validated, self._fields[name])
        return section


def _merged(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """The shared sections with one model's override on top, field by field."""
    merged = {name: dict(value) for name, value in base.items() if name != MODELS}
    for name, fields in override.items():
        if isinstance(fields, Mapping):
            merged.setdefault(name, {}).update(fields)
        else:
            merged[name] = fields
    return merged


class SimulatedPopulation:
    """A book of rules bound to the run's parameters: what one `sim/population` backend answers."""

    def __init__(self, book: PopulationBook | None = None, params: PopulationParams | None = None):
        """Raises ValidationError or ValueError when the parameters do not fit the rules."""
        self.book = book or PopulationBook()
        self.params = self.book.resolve(params)
        self._raw = self.params.model_dump()
        self._by_model: dict[str, dict[str, BaseModel]] = {}

    def identity(self) -> str:
        """A stable text of the parameters: part of the response cache key."""
        payload = json.dumps(self.params.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def for_model(self, model: str) -> dict[str, BaseModel]:
        """One simulated model's parameters, by section: the shared ones with its overrides."""
        found = self._by_model.get(model)
        if found is None:
            label = model.partition("#")[2]
            models = self.params.models
            override = models.get(model) or models.get(label) or {}
            validated = self.book._validate(_merged(self._raw, override))
            found = {name: self.book._section(validated, name) for name in self.book.sections}
            self._by_model[model] = found
        return found

    def answer(self, request: Request) -> str:
        """The answer of the rule the request's call names; else the scripted answer."""
        sections = self.for_model(request.model)
        info = request.call
        if info is not None:
            found = self.book.rule(info)
            if found is not None:
                name, rule = found
                text = rule(PopulationCall(request, info, sections[name]))
                if text is not None:
                    return text
        return scripted_answer(request)


def population_answer(
    request: Request, params: PopulationParams, book: PopulationBook | None = None
) -> str:
    """One request's answer under `params` and the rules of `book` (default: none, the scripted
    answer)."""
    return SimulatedPopulation(book, params).answer(request)


class PopulationBackend:
    """The `sim/population` provider: instant, deterministic, parameters from the experiment."""

    def __init__(self, population: SimulatedPopulation | None = None) -> None:
        self._population = population or SimulatedPopulation()

    @property
    def endpoint(self) -> str:
        return f"sim/{POPULATION}"

    async def generate(self, request: Request) -> RawCompletion:
        text = self._population.answer(request)
        prompt_tokens = sum(max(1, len(m.content) // 4) for m in request.messages)
        return RawCompletion(
            text=text, prompt_tokens=prompt_tokens, completion_tokens=max(1, len(text) // 4)
        )

    async def aclose(self) -> None:
        return None
