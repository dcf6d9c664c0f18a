"""Reasoning is taken out of a completion's text by the think-tag rule, in every form servers
send it; each expected answer and reasoning here is written out by hand."""

from __future__ import annotations

import pytest

from backchannel.backends import Split, ThinkTags, split_reasoning

TAGS = ThinkTags()

CASES = [
    # a whole block before the answer
    ("<think>\nIt is Canberra.\n</think>\n\nCanberra", "", Split("Canberra", "It is Canberra.")),
    # the template opened the block: only the closing tag is in the output
    ("I recall Canberra.</think>\n\nCanberra", "", Split("Canberra", "I recall Canberra.")),
    # cut off inside the block: all of it is reasoning, no answer
    ("<think>\nLet me recall the", "", Split("", "Let me recall the", unterminated=True)),
    # no tags at all: the text exactly as sent, spaces included
    ("  Canberra.\n", "", Split("  Canberra.\n", "")),
    # the server's reasoning field comes first, then any block of the text
    ("Canberra", "Field reasoning.", Split("Canberra", "Field reasoning.")),
    (
        "<think>Tag reasoning.</think>Canberra",
        "Field reasoning.",
        Split("Canberra", "Field reasoning.\n\nTag reasoning."),
    ),
    # text before and after a block is the answer; two blocks are both reasoning
    ("Well, <think>a</think>Canberra<think>b</think>.", "", Split("Well, Canberra.", "a\n\nb")),
    # an empty block is no reasoning
    ("<think></think>\nCanberra", "", Split("Canberra", "")),
]


@pytest.mark.parametrize(("text", "field", "expected"), CASES)
def test_default_think_tags(text: str, field: str, expected: Split) -> None:
    assert split_reasoning(text, field, TAGS) == expected


def test_no_rule_keeps_the_text_as_sent() -> None:
    text = "<think>x</think>Canberra"
    assert split_reasoning(text, "r", None) == Split(text, "r")


def test_custom_tags() -> None:
    tags = ThinkTags("[[reasoning]]", "[[/reasoning]]")
    assert split_reasoning("[[reasoning]]hm[[/reasoning]] yes", "", tags) == Split("yes", "hm")
    # the default tags mean nothing under another rule
    assert split_reasoning("<think>hm</think> yes", "", tags).answer == "<think>hm</think> yes"


def test_opened_by_template_reads_a_text_without_closing_tag_as_all_reasoning() -> None:
    tags = ThinkTags(opened_by_template=True)
    assert split_reasoning("Let me think", "", tags) == Split("", "Let me think", unterminated=True)
    assert split_reasoning("Hm.</think>Yes", "", tags) == Split("Yes", "Hm.")


@pytest.mark.parametrize(("open_", "close"), [("", "</t>"), ("<t>", ""), ("<t>", "<t>")])
def test_tags_must_be_two_different_non_empty_strings(open_: str, close: str) -> None:
    with pytest.raises(ValueError, match="think tags"):
        ThinkTags(open_, close)
