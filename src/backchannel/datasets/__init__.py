"""Factual-question datasets: loaders, false answers, shipped subsets and screening."""

from backchannel.datasets._counterfact import load_counterfact
from backchannel.datasets._false import Candidate, assign_false_answers
from backchannel.datasets._item import DatasetError, FactItem, ItemSet
from backchannel.datasets._items_file import load_items, read_items, write_items
from backchannel.datasets._popqa import load_popqa
from backchannel.datasets._screening import ScreeningResult, screen_items
from backchannel.datasets._shape import ANSWER_TYPES, infer_answer_type
from backchannel.datasets._shipped import SHIPPED, load_shipped
from backchannel.datasets._simpleqa import load_simpleqa

__all__ = [
    "ANSWER_TYPES",
    "SHIPPED",
    "Candidate",
    "DatasetError",
    "FactItem",
    "ItemSet",
    "ScreeningResult",
    "assign_false_answers",
    "infer_answer_type",
    "load_counterfact",
    "load_items",
    "load_popqa",
    "load_shipped",
    "load_simpleqa",
    "read_items",
    "screen_items",
    "write_items",
]
