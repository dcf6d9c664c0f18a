"""Factual-question datasets: loaders, one dispatch for configured sources, false answers,
shipped subsets and screening."""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.datasets._counterfact import load_counterfact
    from backchannel.datasets._false import Candidate, assign_false_answers
    from backchannel.datasets._item import DatasetError, DroppedItem, FactItem, ItemSet
    from backchannel.datasets._items_file import load_items, read_items, write_items
    from backchannel.datasets._popqa import load_popqa
    from backchannel.datasets._population import (
        KNOW,
        SCREEN,
        SCREENING_POPULATION,
        Knowledge,
        knows,
    )
    from backchannel.datasets._screening import (
        ScreeningResult,
        screen_items,
        screening_prompt,
    )
    from backchannel.datasets._shape import ANSWER_TYPES, infer_answer_type
    from backchannel.datasets._shipped import SHIPPED, load_shipped
    from backchannel.datasets._simpleqa import load_simpleqa
    from backchannel.datasets._source import (
        DATASET_FORMATS,
        DatasetFormat,
        DatasetSource,
        load_source,
    )
    from backchannel.datasets._text import find_phrase, normalize

__all__ = [
    "ANSWER_TYPES",
    "DATASET_FORMATS",
    "KNOW",
    "SCREEN",
    "SCREENING_POPULATION",
    "SHIPPED",
    "Candidate",
    "DatasetError",
    "DatasetFormat",
    "DatasetSource",
    "DroppedItem",
    "FactItem",
    "ItemSet",
    "Knowledge",
    "ScreeningResult",
    "assign_false_answers",
    "find_phrase",
    "infer_answer_type",
    "knows",
    "load_counterfact",
    "load_items",
    "load_popqa",
    "load_shipped",
    "load_simpleqa",
    "load_source",
    "normalize",
    "read_items",
    "screen_items",
    "screening_prompt",
    "write_items",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._counterfact": ("load_counterfact",),
            "._false": ("Candidate", "assign_false_answers"),
            "._item": ("DatasetError", "DroppedItem", "FactItem", "ItemSet"),
            "._items_file": ("load_items", "read_items", "write_items"),
            "._popqa": ("load_popqa",),
            "._population": ("KNOW", "SCREEN", "SCREENING_POPULATION", "Knowledge", "knows"),
            "._screening": ("ScreeningResult", "screen_items", "screening_prompt"),
            "._shape": ("ANSWER_TYPES", "infer_answer_type"),
            "._shipped": ("SHIPPED", "load_shipped"),
            "._simpleqa": ("load_simpleqa",),
            "._source": ("DATASET_FORMATS", "DatasetFormat", "DatasetSource", "load_source"),
            "._text": ("find_phrase", "normalize"),
        },
    )
