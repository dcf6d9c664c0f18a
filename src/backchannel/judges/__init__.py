"""Judges: fixed label sets, the rule judge, the LLM judge, and labelling stored events."""

from backchannel.judges._apply import (
    CONTEXT_TURNS,
    RULE_MODEL,
    Judge,
    LabelRow,
    RuleJudge,
    fact_item,
    fact_payload,
    judge_target,
    judge_targets,
    label_counts,
    make_judge,
    targets,
)
from backchannel.judges._labels import PRIVATE_LABELS, PUBLIC_LABELS, PrivateLabel, PublicLabel
from backchannel.judges._llm import LLMJudge, private_messages, public_messages, verdict_of
from backchannel.judges._prompts import judge_template, judge_templates
from backchannel.judges._rule import classify_private, classify_public
from backchannel.judges._target import ContextTurn, Target, Verdict, judge_seed

__all__ = [
    "CONTEXT_TURNS",
    "PRIVATE_LABELS",
    "PUBLIC_LABELS",
    "RULE_MODEL",
    "ContextTurn",
    "Judge",
    "LLMJudge",
    "LabelRow",
    "PrivateLabel",
    "PublicLabel",
    "RuleJudge",
    "Target",
    "Verdict",
    "classify_private",
    "classify_public",
    "fact_item",
    "fact_payload",
    "judge_seed",
    "judge_target",
    "judge_targets",
    "judge_template",
    "judge_templates",
    "label_counts",
    "make_judge",
    "private_messages",
    "public_messages",
    "targets",
    "verdict_of",
]
