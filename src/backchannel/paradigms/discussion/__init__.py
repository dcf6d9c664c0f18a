"""The discussion paradigm: N persona agents discuss a question, all probed privately."""

from backchannel.paradigms.discussion._metrics import conversation_figures, discussion_metrics
from backchannel.paradigms.discussion._personas import roster
from backchannel.paradigms.discussion._protocol import Discussion
from backchannel.paradigms.discussion._results import (
    CellFigures,
    ConversationFigures,
    DiscussionMetrics,
)
from backchannel.paradigms.discussion._settings import DiscussionSettings, Question

__all__ = [
    "CellFigures",
    "ConversationFigures",
    "Discussion",
    "DiscussionMetrics",
    "DiscussionSettings",
    "Question",
    "conversation_figures",
    "discussion_metrics",
    "roster",
]
