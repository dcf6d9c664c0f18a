"""Judges: tasks with fixed label sets, the rule and LLM judges, targets of stored runs, and the
agreement of two judges."""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.judges._agreement import (
        Relabelling,
        agreement,
        confusion_mapping,
        paired_labels,
        reweight,
        target_keys,
        transfer_rates,
        valid_labels,
    )
    from backchannel.judges._apply import (
        CONTEXT_TURNS,
        RULE_MODEL,
        Chooser,
        Judge,
        Judging,
        LabelRow,
        Pick,
        RuleJudge,
        collect_targets,
        judge_target,
        judge_targets,
        label_counts,
        make_judge,
        rule_gaps,
        sample_targets,
        speaker_name,
    )
    from backchannel.judges._fact import (
        FACT_PRIVATE,
        FACT_PUBLIC,
        classify_answers,
        fact_item,
        fact_payload,
        private_messages,
        public_messages,
    )
    from backchannel.judges._labelling import Agreement, LabelJob, Labelling, TaskLabelling
    from backchannel.judges._labels import PRIVATE_LABELS, PUBLIC_LABELS, PrivateLabel, PublicLabel
    from backchannel.judges._llm import LLMJudge, verdict_of
    from backchannel.judges._prompts import judge_template, judge_templates
    from backchannel.judges._rule import classify_private, classify_public
    from backchannel.judges._target import ContextTurn, JudgeTask, Target, Verdict, judge_seed

__all__ = [
    "CONTEXT_TURNS",
    "FACT_PRIVATE",
    "FACT_PUBLIC",
    "PRIVATE_LABELS",
    "PUBLIC_LABELS",
    "RULE_MODEL",
    "Agreement",
    "Chooser",
    "ContextTurn",
    "Judge",
    "JudgeTask",
    "Judging",
    "LLMJudge",
    "LabelJob",
    "LabelRow",
    "Labelling",
    "Pick",
    "PrivateLabel",
    "PublicLabel",
    "Relabelling",
    "RuleJudge",
    "Target",
    "TaskLabelling",
    "Verdict",
    "agreement",
    "classify_answers",
    "classify_private",
    "classify_public",
    "collect_targets",
    "confusion_mapping",
    "fact_item",
    "fact_payload",
    "judge_seed",
    "judge_target",
    "judge_targets",
    "judge_template",
    "judge_templates",
    "label_counts",
    "make_judge",
    "paired_labels",
    "private_messages",
    "public_messages",
    "reweight",
    "rule_gaps",
    "sample_targets",
    "speaker_name",
    "target_keys",
    "transfer_rates",
    "valid_labels",
    "verdict_of",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._agreement": (
                "Relabelling",
                "agreement",
                "confusion_mapping",
                "paired_labels",
                "reweight",
                "target_keys",
                "transfer_rates",
                "valid_labels",
            ),
            "._apply": (
                "CONTEXT_TURNS",
                "RULE_MODEL",
                "Chooser",
                "Judge",
                "Judging",
                "LabelRow",
                "Pick",
                "RuleJudge",
                "collect_targets",
                "judge_target",
                "judge_targets",
                "label_counts",
                "make_judge",
                "rule_gaps",
                "sample_targets",
                "speaker_name",
            ),
            "._fact": (
                "FACT_PRIVATE",
                "FACT_PUBLIC",
                "classify_answers",
                "fact_item",
                "fact_payload",
                "private_messages",
                "public_messages",
            ),
            "._labelling": ("Agreement", "LabelJob", "Labelling", "TaskLabelling"),
            "._labels": ("PRIVATE_LABELS", "PUBLIC_LABELS", "PrivateLabel", "PublicLabel"),
            "._llm": ("LLMJudge", "verdict_of"),
            "._prompts": ("judge_template", "judge_templates"),
            "._rule": ("classify_private", "classify_public"),
            "._target": ("ContextTurn", "JudgeTask", "Target", "Verdict", "judge_seed"),
        },
    )
