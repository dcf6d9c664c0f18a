"""The LLM judge's prompt templates: package files under `prompts/`, recorded in run manifests."""

from __future__ import annotations

from functools import cache
from importlib import resources

PROMPT_PACKAGE = "backchannel.judges.prompts"
TEMPLATE_NAMES = ("private.txt", "public.txt", "awareness.txt")


@cache
def judge_template(name: str) -> str:
    """One template's text, without the file's final newline."""
    if name not in TEMPLATE_NAMES:
        raise KeyError(f"no judge template {name!r}; expected one of {TEMPLATE_NAMES}")
    text = (resources.files(PROMPT_PACKAGE) / name).read_text(encoding="utf-8")
    return text.removesuffix("\n")


def judge_templates() -> dict[str, str]:
    """Every judge template by file name, for a run's manifest."""
    return {name: judge_template(name) for name in TEMPLATE_NAMES}
