"""Replica URL lists written as shell-style brace patterns: `http://gpu{1..3}:{8000..8001}/v1`
names six servers, `http://{a,b}.lan:8000/v1` two."""

from __future__ import annotations

import re
from collections.abc import Iterable

_BRACE = re.compile(r"\{([^{}]*)\}")
_RANGE = re.compile(r"^(\d+)\.\.(\d+)$")
MAX_REPLICAS = 4096


def expand_braces(pattern: str) -> list[str]:
    """Every string a brace pattern names, in order (leftmost brace varies slowest)."""
    match = _BRACE.search(pattern)
    if match is None:
        if "{" in pattern or "}" in pattern:
            raise ValueError(f"unbalanced brace in {pattern!r}")
        return [pattern]
    body = match.group(1)
    numeric = _RANGE.match(body)
    if numeric is not None:
        low, high = int(numeric.group(1)), int(numeric.group(2))
        if high < low:
            raise ValueError(f"empty range {{{body}}} in {pattern!r}; write {{low..high}}")
        width = len(numeric.group(1)) if numeric.group(1).startswith("0") else 0
        options = [str(n).zfill(width) for n in range(low, high + 1)]
    elif "," in body:
        options = body.split(",")
    else:
        raise ValueError(
            f"{{{body}}} in {pattern!r} is neither a range {{1..4}} nor a list {{a,b}}"
        )
    head, tail = pattern[: match.start()], pattern[match.end() :]
    expanded: list[str] = []
    for option in options:
        expanded.extend(expand_braces(head + option + tail))
        if len(expanded) > MAX_REPLICAS:
            raise ValueError(f"{pattern!r} names more than {MAX_REPLICAS} servers")
    return expanded


def expand_urls(patterns: Iterable[str]) -> tuple[str, ...]:
    """All replica URLs of an endpoint's `base_urls`; raises ValueError on a bad or repeated one."""
    urls: list[str] = []
    for pattern in patterns:
        for url in expand_braces(pattern):
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"replica URL {url!r} must start with http:// or https://")
            if url in urls:
                raise ValueError(f"replica URL {url!r} is listed twice in base_urls")
            urls.append(url)
    return tuple(urls)
