"""Reasoning apart from the answer: a server's reasoning field, or a think block in the text.

Servers mark reasoning two ways: a separate message field (`reasoning_content` from vLLM and
SGLang reasoning parsers, `reasoning` from some routers), or tags in the content
(`<think>...</think>` from DeepSeek-R1 distills, Qwen3 and many llama.cpp and Ollama builds).
Chat templates that open the block themselves leave the opening tag out of the output, and a
completion cut off by max_tokens leaves the block unterminated; both are handled here, once,
for every backend.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ThinkTags:
    """How a model marks reasoning inside its text.

    `opened_by_template`: the chat template writes the opening tag into the prompt, so the
    output starts inside the block (a text with no closing tag is then all reasoning).
    """

    open: str = "<think>"
    close: str = "</think>"
    opened_by_template: bool = False

    def __post_init__(self) -> None:
        if not self.open or not self.close or self.open == self.close:
            raise ValueError("think tags need a non-empty opening and a different closing tag")


@dataclass(frozen=True, slots=True)
class Split:
    """A completion's answer and reasoning; `unterminated`: the text ended inside reasoning."""

    answer: str
    reasoning: str
    unterminated: bool = False


def split_reasoning(text: str, server_reasoning: str = "", tags: ThinkTags | None = None) -> Split:
    """Take think blocks out of `text`; the reasoning is the server's field, then the blocks.

    A closing tag before any opening tag means the block was opened by the template; an
    opening tag with no closing tag leaves everything after it as reasoning. A text without
    tags (or `tags` None) is the answer exactly as sent.
    """
    blocks = [server_reasoning.strip()] if server_reasoning.strip() else []
    if tags is None:
        return Split(text, "\n\n".join(blocks))
    first_open, first_close = text.find(tags.open), text.find(tags.close)
    if first_open == -1 and first_close == -1 and not tags.opened_by_template:
        return Split(text, "\n\n".join(blocks))
    inside = tags.opened_by_template or (
        first_close != -1 and (first_open == -1 or first_close < first_open)
    )
    answer: list[str] = []
    rest, unterminated = text, False
    while True:
        if inside:
            end = rest.find(tags.close)
            if end == -1:
                blocks.append(rest.strip())
                unterminated = True
                break
            blocks.append(rest[:end].strip())
            rest, inside = rest[end + len(tags.close) :], False
        else:
            start = rest.find(tags.open)
            if start == -1:
                answer.append(rest)
                break
            answer.append(rest[:start])
            rest, inside = rest[start + len(tags.open) :], True
    return Split(
        "".join(answer).strip(), "\n\n".join(b for b in blocks if b), unterminated=unterminated
    )
