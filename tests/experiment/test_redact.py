"""The stored experiment text loses every secret: api_key values, URL user-info, and comments
holding a string shaped like a key."""

from __future__ import annotations

import pytest

from backchannel.backends import redact_userinfo
from backchannel.experiment import looks_like_key, redact
from backchannel.experiment._redact import REDACTED_COMMENT


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "base_url: https://bob:s3cret@api.example.com/v1\n",
            "base_url: https://<redacted>@api.example.com/v1\n",
        ),
        ("base_url: http://token@h:8000/v1\n", "base_url: http://<redacted>@h:8000/v1\n"),
        (
            "# old server: https://u:p@old.example.com\n",
            "# old server: https://<redacted>@old.example.com\n",
        ),
        ("base_url: http://h/v1\n", "base_url: http://h/v1\n"),
        ("mail: someone@example.com\n", "mail: someone@example.com\n"),
    ],
)
def test_url_user_info_is_removed(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact_userinfo(text) == expected


@pytest.mark.parametrize(
    "comment",
    [
        "# my key: sk-proj-abcdefghijklmnop1234",
        "# hf_abcdefghijklmnopqrstu",
        "# token 8f3a9c2b7d1e4f6a0b5c8d2e9f1a3b4c",
        "# ghp_0123456789abcdefghijklmnopqrstuv",
    ],
)
def test_a_comment_holding_a_key_shaped_string_is_removed(comment: str) -> None:
    text = f"name: x\n{comment}\nparadigm: discussion  {comment}\n"
    redacted = redact(text)
    assert redacted == f"name: x\n{REDACTED_COMMENT}\nparadigm: discussion  {REDACTED_COMMENT}\n"


@pytest.mark.parametrize(
    "comment",
    [
        "# questions from data/questions_2024_final_version.jsonl",
        "# see https://example.com/docs/2024/setup",
        "# run with --concurrency 8 on 2 GPUs",
        "# a_very_long_identifier_without_any_digits_at_all",
    ],
)
def test_ordinary_comments_stay(comment: str) -> None:
    text = f"name: x  {comment}\n"
    assert redact(text) == text
    assert not looks_like_key(comment)
