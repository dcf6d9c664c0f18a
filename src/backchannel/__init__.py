"""backchannel: multi-agent LLM experiments that record public talk and private belief.

`import backchannel as bc` is the front door: run experiments (`bc.run`, `bc.arun`), open stored
runs as DataFrames (`bc.open_run`), and write paradigms (`bc.Paradigm`, `bc.ConversationContext`,
`bc.Agent`, ...). Names are imported on first use, so the command line starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # running experiments and reading runs
    "load_experiment": "backchannel._api",
    "run": "backchannel._api",
    "arun": "backchannel._api",
    "open_run": "backchannel._api",
    "Run": "backchannel._api",
    "RunTables": "backchannel.analysis",
    "AnalysisOptions": "backchannel.paradigms",
    # writing paradigms
    "Paradigm": "backchannel.paradigms",
    "CallEstimate": "backchannel.paradigms",
    "ConversationContext": "backchannel.engine",
    "Agent": "backchannel.engine",
    "Room": "backchannel.engine",
    "Item": "backchannel.engine",
    "Event": "backchannel.engine",
    "GenerationSettings": "backchannel.backends",
    "LabelSet": "backchannel.backends",
    "IntRange": "backchannel.backends",
    "Ranking": "backchannel.backends",
    "JsonSchema": "backchannel.backends",
    "register_sim": "backchannel.backends",
    "Report": "backchannel.report",
    # judging a paradigm's events
    "JudgeTask": "backchannel.judges",
    "Judging": "backchannel.judges",
    "Pick": "backchannel.judges",
    # errors
    "BackchannelError": "backchannel.errors",
    "ConfigError": "backchannel.errors",
}

__all__ = [
    "Agent",
    "AnalysisOptions",
    "BackchannelError",
    "CallEstimate",
    "ConfigError",
    "ConversationContext",
    "Event",
    "GenerationSettings",
    "IntRange",
    "Item",
    "JsonSchema",
    "JudgeTask",
    "Judging",
    "LabelSet",
    "Paradigm",
    "Pick",
    "Ranking",
    "Report",
    "Room",
    "Run",
    "RunTables",
    "__version__",
    "arun",
    "load_experiment",
    "open_run",
    "register_sim",
    "run",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'backchannel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    from backchannel._api import Run, arun, load_experiment, open_run, run
    from backchannel.analysis import RunTables
    from backchannel.backends import (
        GenerationSettings,
        IntRange,
        JsonSchema,
        LabelSet,
        Ranking,
        register_sim,
    )
    from backchannel.engine import Agent, ConversationContext, Event, Item, Room
    from backchannel.errors import BackchannelError, ConfigError
    from backchannel.judges import JudgeTask, Judging, Pick
    from backchannel.paradigms import AnalysisOptions, CallEstimate, Paradigm
    from backchannel.report import Report
