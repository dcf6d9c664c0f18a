"""backchannel: multi-agent LLM experiments that record public talk and private belief.

`import backchannel as bc` is the front door: run experiments (`bc.run`, `bc.arun`), open stored
runs as DataFrames (`bc.open_run`) or many runs for SQL (`bc.open_runs`), and write paradigms
(`bc.Paradigm`, `bc.ConversationContext`, `bc.Agent`, ...). Names are imported on first use, so
the command line starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports
from backchannel._version import __version__

__all__ = [
    "Agent",
    "AnalysisOptions",
    "BackchannelError",
    "CallEstimate",
    "CellRow",
    "ConfigError",
    "ConversationContext",
    "Design",
    "Event",
    "GenerationSettings",
    "IntRange",
    "Item",
    "JsonSchema",
    "JudgeTask",
    "Judging",
    "LabelSet",
    "Metrics",
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
    "open_runs",
    "register_sim",
    "run",
]


if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            # running experiments and reading runs
            ".orchestration": ("load_experiment", "run", "arun", "open_run", "Run"),
            ".analysis": ("RunTables", "Metrics", "CellRow", "Design"),
            # writing paradigms
            ".paradigms": ("AnalysisOptions", "Paradigm", "CallEstimate"),
            ".engine": ("ConversationContext", "Agent", "Room", "Item", "Event"),
            ".backends": (
                "GenerationSettings",
                "LabelSet",
                "IntRange",
                "Ranking",
                "JsonSchema",
                "register_sim",
            ),
            ".report": ("Report",),
            # many runs in one SQL query (the `query` extra)
            ".interop": ("open_runs",),
            # judging a paradigm's events
            ".judges": ("JudgeTask", "Judging", "Pick"),
            # errors
            ".errors": ("BackchannelError", "ConfigError"),
        },
    )

if TYPE_CHECKING:
    from backchannel.analysis import CellRow, Design, Metrics, RunTables
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
    from backchannel.interop import open_runs
    from backchannel.judges import JudgeTask, Judging, Pick
    from backchannel.orchestration import Run, arun, load_experiment, open_run, run
    from backchannel.paradigms import AnalysisOptions, CallEstimate, Paradigm
    from backchannel.report import Report
