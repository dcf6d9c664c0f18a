"""What a secret looks like, by the name of its field and by the look of its value: the one
place that decides what the manifest, messages and stored errors must never hold.

By name: a field called like a credential (`api_key`, `auth_token`, `x-api-key`, `password`,
`client_secret`, `Authorization`, ...), but not one that names where a secret is kept
(`api_key_env`) or counts tokens (`max_tokens`). By look: a known provider prefix (`sk-`,
`hf_`, `ghp_`, `AKIA`, ...), a JSON Web Token (`eyJ...`), a long run of token characters mixing
letters and digits, or a run holding `/`, `.`, `+` or `=` whose letters and digits switch
class as often as random text does (a base64 secret) and unlike words, paths and model names.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

REDACTED = "<redacted>"

# Words that make a field a credential wherever they appear in its name.
_SECRET_WORDS = frozenset(
    {
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "authorization",
        "auth",
        "bearer",
        "credential",
        "credentials",
        "cookie",
        "apikey",
        "signature",
    }
)
# Words that make a following `key` a credential (`api_key`, `x-api-key`, `private_key`).
_KEY_QUALIFIERS = frozenset(
    {"api", "access", "secret", "private", "auth", "client", "session", "signing", "account"}
)
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def secret_name(name: str) -> bool:
    """Whether a field of this name holds a credential (`*_env` names only name a variable)."""
    words = [word.lower() for word in _NAME_WORDS.findall(name)]
    if not words or words[-1] == "env":
        return False
    if words == ["key"] or any(word in _SECRET_WORDS for word in words):
        return True
    return any(
        word == "key" and index > 0 and words[index - 1] in _KEY_QUALIFIERS
        for index, word in enumerate(words)
    )


_KEY_PREFIXED = re.compile(
    r"(?<![\w-])(?:sk|pk|rk|hf|ghp|gho|ghu|ghs|github_pat|glpat|xox[abprs]|AKIA|ASIA|AIza)[-_]?"
    r"[A-Za-z0-9_-]{12,}"
)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}")
_LONG_TOKEN = re.compile(r"(?<![\w./-])[A-Za-z0-9_\-+=]{24,}(?![\w./-])")
# A run of characters that secrets are written in, separators included.
_RUN = re.compile(r"[A-Za-z0-9_\-+/=.~]{20,}")


def _mixes(token: str) -> bool:
    return sum(c.isdigit() for c in token) >= 2 and sum(c.isalpha() for c in token) >= 2


def _switches(run: str) -> tuple[int, int]:
    """(class switches, letters and digits) of a run: a switch is a lowercase letter followed
    by a capital, or a letter next to a digit. Random base64 switches at about four in ten
    places; words and paths rarely (a capital after a lowercase letter starts a camelCase
    word; a digit beside a letter is a version)."""
    switches = alnum = 0
    for a, b in itertools.pairwise(run):
        if not (a.isalnum() and b.isalnum()):
            continue
        alnum += 1
        if (a.islower() and b.isupper()) or (a.isalpha() != b.isalpha()):
            switches += 1
    return switches, alnum


def looks_like_key(text: str) -> bool:
    """Whether `text` holds a string shaped like an API key, token or other secret."""
    if _KEY_PREFIXED.search(text) or _JWT.search(text):
        return True
    if any(_mixes(m.group()) for m in _LONG_TOKEN.finditer(text)):
        return True
    for match in _RUN.finditer(text):
        switches, alnum = _switches(match.group())
        if alnum >= 20 and switches >= 6 and switches >= 0.2 * alnum:
            return True
    return False


def scrub(text: str) -> str:
    """`text` with every key-shaped part replaced by `<redacted>` (for messages built from what
    a server sent, which may echo a request's fields)."""
    text = _KEY_PREFIXED.sub(REDACTED, text)
    text = _JWT.sub(REDACTED, text)
    text = _LONG_TOKEN.sub(lambda m: REDACTED if _mixes(m.group()) else m.group(), text)
    return _RUN.sub(lambda m: REDACTED if looks_like_key(m.group()) else m.group(), text)


def redact_fields(value: Any, *, by_look: bool) -> Any:
    """A copy of a JSON-like value with the string values of credential-named fields replaced,
    at any depth; with `by_look`, also every string that looks like a key."""
    if isinstance(value, dict):
        return {
            key: _redact_all(item)
            if isinstance(key, str) and secret_name(key)
            else redact_fields(item, by_look=by_look)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_fields(item, by_look=by_look) for item in value]
    if by_look and isinstance(value, str) and looks_like_key(value):
        return REDACTED
    return value


def _redact_all(value: Any) -> Any:
    """Every string inside a credential-named field; numbers and booleans are no secret."""
    if isinstance(value, str):
        return REDACTED
    if isinstance(value, dict):
        return {key: _redact_all(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_redact_all(item) for item in value]
    return value
