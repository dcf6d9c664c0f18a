"""The experiment as stored in the manifest, as passed (the text) and as resolved (the data):
secrets removed, by the name of their field and by the look of their value.

From the text go: the value of every field named like a credential (`api_key`, `auth_token`,
`password`, ... in any YAML form, at any depth, also on commented-out lines), every value that
looks like a key wherever it stands, the user-info and the query string of every URL, and the
text of every comment that holds a string shaped like a key. From the resolved data go: literal
endpoint keys, URL user-info and query strings, credential-named string fields anywhere, and in
the request fields (endpoints and generation rules, their `extra_body` included) every value
that looks like a key.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from backchannel._secrets import REDACTED, looks_like_key, redact_fields, secret_name
from backchannel.backends import redact_urls

REDACTED_COMMENT = "# <comment removed: it held a string shaped like a key>"
_COMMENT = re.compile(r"(^|[ \t])#[^\n]*", re.MULTILINE)
# `name: value` or `name = value` inside a comment (a field commented out).
_COMMENTED_FIELD = re.compile(r"""([A-Za-z_][\w-]*)["']?\s*[:=]\s*""")


def redact(text: str) -> str:
    """The experiment text with every secret removed (see the module's docstring)."""
    text = _redact_scalars(text)
    text = redact_urls(text)
    return _COMMENT.sub(_redact_comment, text)


def _redact_comment(match: re.Match[str]) -> str:
    lead, comment = match.group(1), match.group()[len(match.group(1)) :]
    for field in _COMMENTED_FIELD.finditer(comment):
        if secret_name(field.group(1)):
            # A field commented out (say, when switching to api_key_env) still holds the key.
            comment = comment[: field.end()] + REDACTED
            break
    if looks_like_key(comment):
        return lead + REDACTED_COMMENT
    return lead + comment


def _redact_scalars(text: str) -> str:
    """Replace, in the text itself, the scalars under credential-named keys and the scalars
    that look like keys (the YAML is parsed only to find their spans)."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return text
    spans: list[tuple[int, int]] = []
    seen: set[int] = set()

    def span(node: yaml.ScalarNode) -> None:
        start, end = node.start_mark.index, node.end_mark.index
        # A block scalar's span runs over its line break into the next line.
        spans.append((start, start + len(text[start:end].rstrip())))

    def visit(node: yaml.Node | None, secret: bool) -> None:
        if node is None or id(node) in seen:  # an alias reaches the anchored node again
            return
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if node.value and (secret or looks_like_key(node.value)):
                span(node)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                named = isinstance(key, yaml.ScalarNode) and secret_name(str(key.value))
                visit(key, False)
                visit(value, secret or named)
        elif isinstance(node, yaml.SequenceNode):
            for child in node.value:
                visit(child, secret)

    visit(root, False)
    for start, end in sorted(set(spans), reverse=True):
        if start < end:
            text = text[:start] + REDACTED + text[end:]
    return text


def redact_resolved(data: dict[str, Any]) -> dict[str, Any]:
    """The resolved configuration without secrets (see the module's docstring)."""
    data = dict(data)
    endpoints = []
    for endpoint in data.get("endpoints") or []:
        endpoint = dict(endpoint)
        endpoint.pop("api_key", None)
        if isinstance(endpoint.get("base_url"), str):
            endpoint["base_url"] = redact_urls(endpoint["base_url"])
        if isinstance(endpoint.get("base_urls"), list):
            endpoint["base_urls"] = [redact_urls(u) for u in endpoint["base_urls"]]
        endpoints.append(endpoint)
    if "endpoints" in data:
        data["endpoints"] = redact_fields(endpoints, by_look=True)
    if "generation" in data:
        data["generation"] = redact_fields(data["generation"], by_look=True)
    redacted: dict[str, Any] = redact_fields(data, by_look=False)
    return redacted
