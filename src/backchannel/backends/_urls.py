"""Checks of endpoint URLs, shared by the experiment file and the environment's OPENAI_BASE_URL."""

from __future__ import annotations

import re
from urllib.parse import urlsplit


def url_problem(url: str) -> str | None:
    """Why `url` cannot be an endpoint's base URL, or None when it can (a message never shows
    a user-info part)."""
    hint = "give a URL like http://127.0.0.1:8000/v1"
    shown = repr(redact_urls(url))
    if url != url.strip() or any(c.isspace() or ord(c) < 32 for c in url):
        return f"{shown} holds spaces or control characters; {hint}"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return f"{shown} is not an http:// or https:// URL; {hint}"
    try:
        port = parts.port
    except ValueError:
        return f"{shown} has an invalid port (ports are 1 to 65535); {hint}"
    if not parts.hostname:
        return f"{shown} names no host; {hint}"
    if port == 0:
        return f"{shown} has an invalid port (ports are 1 to 65535); {hint}"
    if "@" in parts.netloc:
        return (
            f"{shown} holds user-info (user:secret@), which cannot be sent beside the API key; "
            "drop it and give the secret with api_key_env"
        )
    if parts.query or parts.fragment or url.rstrip().endswith(("?", "#")):
        # The SDK glues each path after the whole base URL, so a query string would end up
        # inside every path; and a key in it would be one more place a secret travels.
        return (
            f"{shown} holds a query string or fragment, which the client cannot send (it would "
            "end up inside every request path); drop it: a key goes in api_key_env, "
            "server-specific request fields in extra_body"
        )
    return None


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@'\"<>]+@")
# The query string (and fragment) of a URL: from its `?` up to the next space or quote.
_QUERY = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s?#'\"<>]*)[?#][^\s'\"<>]*")
REDACTED_QUERY = "?<redacted>"


def redact_userinfo(text: str) -> str:
    """`scheme://user:secret@host` -> `scheme://<redacted>@host`, wherever a URL appears."""
    return _USERINFO.sub(r"\1<redacted>@", text)


def redact_urls(text: str) -> str:
    """Every URL in `text` without its user-info and its query string (`?api_key=...` becomes
    `?<redacted>`): the two places a URL carries secrets."""
    return _QUERY.sub(r"\1" + REDACTED_QUERY, redact_userinfo(text))


def shown_url(url: str) -> str:
    """A URL as messages show it: scheme, host, port and path only."""
    parts = urlsplit(redact_userinfo(url))
    if parts.query or parts.fragment:
        return parts._replace(query="", fragment="").geturl() + REDACTED_QUERY
    return parts.geturl()
