"""Checks of endpoint URLs, shared by the experiment file and the environment's OPENAI_BASE_URL."""

from __future__ import annotations

import re
from urllib.parse import urlsplit


def url_problem(url: str) -> str | None:
    """Why `url` cannot be an endpoint's base URL, or None when it can (a message never shows
    a user-info part)."""
    hint = "give a URL like http://127.0.0.1:8000/v1"
    shown = repr(redact_userinfo(url))
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
    return None


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@'\"<>]+@")


def redact_userinfo(text: str) -> str:
    """`scheme://user:secret@host` -> `scheme://<redacted>@host`, wherever a URL appears."""
    return _USERINFO.sub(r"\1<redacted>@", text)
