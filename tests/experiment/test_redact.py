"""The stored experiment loses every secret: as passed (the text) and as resolved (the data), by
the name of a field (api_key, auth_token, password, ... at any depth) and by the look of a value
(provider prefixes, JWTs, base64 secrets holding / or .), URL user-info and query strings, and
comments holding a string shaped like a key."""

from __future__ import annotations

import pytest

from backchannel._secrets import scrub, secret_name
from backchannel.backends import redact_userinfo
from backchannel.experiment import looks_like_key, redact, redact_resolved
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


def test_a_commented_out_credential_keeps_its_name_and_loses_its_value() -> None:
    text = "name: x\n# my key: sk-proj-abcdefghijklmnop1234\n#   auth_token = abc.def/ghi\n"
    assert redact(text) == "name: x\n# my key: <redacted>\n#   auth_token = <redacted>\n"


@pytest.mark.parametrize(
    "comment",
    [
        "# old one sk-proj-abcdefghijklmnop1234",
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


# By the name of the field ---------------------------------------------------------------------

SECRET_NAMES = [
    "api_key",
    "apiKey",
    "APIKey",
    "x-api-key",
    "OPENAI_API_KEY",
    "key",
    "auth_token",
    "access_token",
    "hf_token",
    "sessionToken",
    "password",
    "client_secret",
    "Authorization",
    "private_key",
    "cookie",
]
PLAIN_NAMES = [
    "api_key_env",
    "max_tokens",
    "min_tokens",
    "skip_special_tokens",
    "key_model",
    "second_key_model",
    "cache_key",
    "top_k",
    "chat_template_kwargs",
    "author",
    "authority",
    "keep_alive",
    "seed",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_credential_names_are_secret(name: str) -> None:
    assert secret_name(name)


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_other_names_are_not(name: str) -> None:
    assert not secret_name(name)


# By the look of the value ---------------------------------------------------------------------

KEY_SHAPED = [
    "sk-proj-abcdefghijklmnop1234",
    "AKIAIOSFODNN7EXAMPLE9",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc",  # a JWT
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # base64 holding /
    "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    "my.secret.with.dots.Xk29Lq8Zp3Wm7Rt",  # holding .
    "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0",
    "8f3a9c2b7d1e4f6a0b5c8d2e9f1a3b4c",
]
NOT_KEYS = [
    "data/questions_2024_final_version.jsonl",
    "https://example.com/docs/2024/setup",
    "src/backchannel/datasets/data/counterfact/counterfact.json",
    "models/SmolLM2-135M-Instruct-Q8_0.gguf",
    "meta-llama/Llama-3.1-8B-Instruct",
    "TheBloke/Mistral-7B-Instruct-v0.2-GGUF",
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
    "openai/gpt-4o-mini-2024-07-18",
    "http://gpu{1..3}:{8000..8003}/v1",
    "What is the capital of Australia?",
]


@pytest.mark.parametrize("value", KEY_SHAPED)
def test_key_shaped_values_are_found_alone_and_in_text(value: str) -> None:
    assert looks_like_key(value)
    assert looks_like_key(f"# the old one was {value}, now rotated")
    assert value not in scrub(f"server said: bad field {value}!")


@pytest.mark.parametrize("value", NOT_KEYS)
def test_paths_model_names_and_prose_are_not_keys(value: str) -> None:
    assert not looks_like_key(value)
    assert scrub(f"see {value}") == f"see {value}"


# The text as passed and the data as resolved --------------------------------------------------


def test_credential_fields_at_any_depth_and_in_any_yaml_form_are_redacted() -> None:
    text = (
        "endpoints:\n"
        "  - extra_body: {auth_token: abc, min_p: 0.1}\n"
        "    headers:\n"
        "      Authorization: |\n"
        "        Bearer xyz\n"
        "      x-trace: on\n"
        "nested: {deep: {password: 'p w d', keep: 1}}\n"
        "list: [{client_secret: s1}, plain]\n"
    )
    assert redact(text) == (
        "endpoints:\n"
        "  - extra_body: {auth_token: <redacted>, min_p: 0.1}\n"
        "    headers:\n"
        "      Authorization: <redacted>\n"
        "      x-trace: on\n"
        "nested: {deep: {password: <redacted>, keep: 1}}\n"
        "list: [{client_secret: <redacted>}, plain]\n"
    )


def test_values_shaped_like_keys_go_under_any_name_and_query_strings_go() -> None:
    text = (
        "routing: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc\n"
        "path: data/questions_2024_final_version.jsonl\n"
        "#   password = hunter2\n"
        "# hook: https://h.example/v1?api_key=abc123&x=2 done\n"
    )
    assert redact(text) == (
        "routing: <redacted>\n"
        "path: data/questions_2024_final_version.jsonl\n"
        "#   password = <redacted>\n"
        "# hook: https://h.example/v1?<redacted> done\n"
    )


def test_the_resolved_config_loses_secrets_by_name_everywhere_and_by_look_in_requests() -> None:
    resolved = {
        "endpoints": [
            {
                "base_url": "http://u:p@h:1/v1",
                "api_key": "literal",
                "api_key_env": "MY_KEY",
                "max_in_flight": 8,
                "extra_body": {
                    "x-api-key": "k1",
                    "note": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                    "token_budget": 512,
                },
            }
        ],
        "generation": [{"models": "openai/*", "stop": ["sk-proj-abcdefghijklmnop1234"]}],
        "settings": {"key_model": "openai/x", "path": "runs/8f3a9c2b7d1e4f6a0b5c8d2e9f1a3b4c"},
    }
    assert redact_resolved(resolved) == {
        "endpoints": [
            {
                "base_url": "http://<redacted>@h:1/v1",
                "api_key_env": "MY_KEY",
                "max_in_flight": 8,
                "extra_body": {
                    "x-api-key": "<redacted>",
                    "note": "<redacted>",
                    "token_budget": 512,
                },
            }
        ],
        "generation": [{"models": "openai/*", "stop": ["<redacted>"]}],
        # settings are read back by the paradigms: only credential-named fields go there
        "settings": {"key_model": "openai/x", "path": "runs/8f3a9c2b7d1e4f6a0b5c8d2e9f1a3b4c"},
    }
