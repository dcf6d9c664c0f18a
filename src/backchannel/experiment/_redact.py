"""The experiment text as stored in the manifest: secrets removed.

Three things go: the value of every `api_key` entry (in any YAML form, and in a commented-out
`api_key:` line), the user-info part of every URL (`https://user:secret@host`), and the text of
every comment that holds a string shaped like a key (a key pasted into a free comment).
"""

from __future__ import annotations

import re

import yaml

from backchannel.backends import redact_userinfo

SECRET_KEYS = frozenset({"api_key"})
REDACTED = "<redacted>"
REDACTED_COMMENT = "# <comment removed: it held a string shaped like a key>"
# A key commented out (say, when switching to api_key_env) is still the key's bytes.
_COMMENTED_SECRET = re.compile(
    r"((?:^|[ \t])#[^\n]*?\b(?:" + "|".join(sorted(SECRET_KEYS)) + r")[\"']?\s*:\s*)[^\n]*",
    re.MULTILINE,
)
_COMMENT = re.compile(r"(^|[ \t])#[^\n]*", re.MULTILINE)
# Provider prefixes (sk-, hf_, ghp_, xoxb-, AKIA, AIza, ...) or any long run of token characters.
_KEY_PREFIXED = re.compile(
    r"(?<![\w-])(?:sk|pk|rk|hf|ghp|gho|ghu|ghs|github_pat|glpat|xox[abprs]|AKIA|AIza)[-_]?"
    r"[A-Za-z0-9_-]{12,}"
)
_LONG_TOKEN = re.compile(r"(?<![\w./-])[A-Za-z0-9_\-+=]{24,}(?![\w./-])")


def looks_like_key(text: str) -> bool:
    """Whether `text` holds a string shaped like an API key or token: a known provider prefix,
    or 24+ token characters mixing letters and digits (file names and paths are not tokens)."""
    if _KEY_PREFIXED.search(text):
        return True
    return any(
        sum(c.isdigit() for c in m.group()) >= 2 and sum(c.isalpha() for c in m.group()) >= 2
        for m in _LONG_TOKEN.finditer(text)
    )


def redact(text: str) -> str:
    """The experiment text with every `api_key` value, URL user-info and key-holding comment
    removed."""
    text = _redact_api_keys(text)
    text = _COMMENTED_SECRET.sub(r"\1" + REDACTED, text)
    text = redact_userinfo(text)
    return _COMMENT.sub(
        lambda m: m.group(1) + REDACTED_COMMENT if looks_like_key(m.group()) else m.group(), text
    )


def _redact_api_keys(text: str) -> str:
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return text
    spans: list[tuple[int, int]] = []
    seen: set[int] = set()

    def visit(node: yaml.Node | None) -> None:
        if id(node) in seen:  # an alias or merge key reaches the anchored node again
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.value in SECRET_KEYS:
                    start, end = value.start_mark.index, value.end_mark.index
                    # A block scalar's span runs over its line break into the next line.
                    spans.append((start, start + len(text[start:end].rstrip())))
                visit(value)
        elif isinstance(node, yaml.SequenceNode):
            for child in node.value:
                visit(child)

    visit(root)
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + REDACTED + text[end:]
    return text
