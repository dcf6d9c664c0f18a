"""Keys in request fields reach no file and no terminal: in an endpoint's or a generation rule's
`extra_body` (named like a credential, or shaped like one under any name), in free comments
(JWTs, secrets holding `/` or `.`), on commented-out lines, in a base URL's query string. The
run directory, exported tables (Parquet, CSV, manifest.json), the viewer's run list and static
copy, and every command's output are searched for each key's bytes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from aiohttp.test_utils import TestClient, TestServer
from conftest import ThreadedServer, WriteExperiment, discussion_experiment, invoke

from backchannel.view import RunReader, make_app

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJydW4tNDIiLCJpYXQiOjE3MDAwMDAwMDB9."
    "Q3kZ8vLx2mN9pR4tW7yB1cE5fH0jK6sU"
)
KEYS = {
    "endpoint api_key field": "plainkeyvalue-ALPHA",
    "endpoint auth_token field": "hunter2-BRAVO",
    "endpoint x-api-key field": "CHARLIE-9f8e7d",
    "nested token field": "DELTA-nested-secret",
    "endpoint JWT under a plain name": JWT,
    "generation password field": "ECHO-pass-phrase",
    "generation base64 secret with / under a plain name": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYFOXTROT",
    "comment JWT": "eyJraWQiOiJHT0xGIn0.eyJzdWIiOiJnb2xmLTk5In0.c2lnbmF0dXJlR09MRg",
    "comment secret with / and .": "je7MtGbClwBF/2Zp9Utk/h3yCo8nvb.HOTEL4x",
    "comment secret with dots": "my.secret.with.dots.Xk29Lq8Zp3Wm7Rt",
    "commented-out auth_token": "INDIA-short",
    "commented-out URL query": "JULIETqueryKey77",
}


def experiment_text(base_url: str) -> str:
    data = discussion_experiment(
        factors={"model": ["openai/fake-model"]},
        endpoints=[
            {
                "base_url": base_url,
                "api_key": "sk-literal-endpoint-key-0123456789",
                "extra_body": {
                    "api_key": KEYS["endpoint api_key field"],
                    "auth_token": KEYS["endpoint auth_token field"],
                    "x-api-key": KEYS["endpoint x-api-key field"],
                    "chat_template_kwargs": {"token": KEYS["nested token field"]},
                    "session_note": KEYS["endpoint JWT under a plain name"],
                    "min_p": 0.05,
                },
            }
        ],
        generation=[
            {
                "models": "openai/*",
                "extra_body": {
                    "password": KEYS["generation password field"],
                    "routing": KEYS["generation base64 secret with / under a plain name"],
                    "top_k": 20,
                },
            }
        ],
    )
    text = yaml.safe_dump(data, sort_keys=False)
    return (
        f"# staging token {KEYS['comment JWT']}\n"
        f"# aws: {KEYS['comment secret with / and .']}\n"
        f"name: tiny  # prod {KEYS['comment secret with dots']}\n"
        + text.replace("name: tiny\n", "", 1)
        + f"#   auth_token: {KEYS['commented-out auth_token']}\n"
        + f"# old: http://127.0.0.1:9/v1?api_key={KEYS['commented-out URL query']}\n"
    )


def assert_no_key(data: bytes | str, where: object) -> None:
    raw = data.encode() if isinstance(data, str) else data
    for name, key in [*KEYS.items(), ("literal key", "sk-literal-endpoint-key-0123456789")]:
        assert key.encode() not in raw, f"{name} in {where}"


async def viewer_answers(run: Path) -> list[str]:
    reader = RunReader(run)
    try:
        async with TestClient(TestServer(make_app([reader]))) as client:
            answers = []
            for path in ("/api/runs", "/api/runs/0/summary", "/api/runs/0/conversations"):
                response = await client.get(path)
                assert response.status == 200, path
                answers.append(await response.text())
            return answers
    finally:
        reader.close()


def test_keys_in_request_fields_and_comments_reach_no_file_and_no_output(
    write_experiment: WriteExperiment,
    tmp_path: Path,
    threaded_server: Callable[..., ThreadedServer],
) -> None:
    server = threaded_server()
    path = write_experiment(experiment_text(server.base_url))
    run = tmp_path / "run"
    outputs = [invoke("run", path, "-o", run)]
    assert outputs[0].exit_code == 0, outputs[0].stderr
    # The fields were really sent: redaction is of what is stored, not of the requests.
    sent = server.server.requests[0]
    assert sent["auth_token"] == KEYS["endpoint auth_token field"]
    assert sent["routing"] == KEYS["generation base64 secret with / under a plain name"]
    assert sent["min_p"] == 0.05 and sent["top_k"] == 20

    outputs.append(invoke("status", run))
    outputs.append(invoke("export", run, "-o", tmp_path / "parquet"))
    outputs.append(invoke("export", run, "-o", tmp_path / "csv", "--format", "csv"))
    outputs.append(invoke("metrics", run))
    outputs.append(invoke("report", run, "-o", tmp_path / "report"))
    outputs.append(invoke("view", run, "--static", str(tmp_path / "static")))
    for result in outputs:
        assert result.exit_code == 0, result.stderr
        assert_no_key(result.stdout + result.stderr, "a command's output")
    files = [
        p
        for folder in (run, tmp_path / "parquet", tmp_path / "csv", tmp_path / "report")
        for p in folder.rglob("*")
        if p.is_file()
    ]
    static = [p for p in (tmp_path / "static").rglob("*") if p.is_file()]
    assert len(static) > 3
    for file in [*files, *static]:
        assert_no_key(file.read_bytes(), file)
    for answer in asyncio.run(viewer_answers(run)):
        assert_no_key(answer, "the viewer's API")

    manifest = json.loads((tmp_path / "csv" / "manifest.json").read_text())
    resolved = manifest["config_resolved"]
    body = resolved["endpoints"][0]["extra_body"]
    assert body["auth_token"] == "<redacted>" and body["session_note"] == "<redacted>"
    assert body["chat_template_kwargs"] == {"token": "<redacted>"} and body["min_p"] == 0.05
    assert resolved["generation"][0]["extra_body"]["top_k"] == 20
    passed = manifest["config_as_passed"]
    assert "# old: http://127.0.0.1:9/v1?<redacted>" in passed
    assert "#   auth_token: <redacted>" in passed
    assert passed.count("<comment removed") == 3
    assert "min_p: 0.05" in passed  # what is no secret stays


@pytest.mark.parametrize(
    "query", ["?api_key=KILOsecret42", "?token=KILOsecret42&x=1", "#KILOsecret42"]
)
def test_a_base_url_with_a_query_string_is_refused_without_echoing_it(
    query: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    data = discussion_experiment(
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"base_url": f"http://127.0.0.1:9/v1{query}", "api_key": "k"}],
    )
    for options in (["--dry-run"], []):
        result = invoke("run", write_experiment(data), "-o", tmp_path / "run", *options)
        assert result.exit_code == 2
        message = result.stderr.replace("\n", " ")
        assert "holds a query string or fragment" in message and "api_key_env" in message
        assert "KILOsecret42" not in result.stdout + result.stderr
        assert "http://127.0.0.1:9/v1?<redacted>" in message
        assert not (tmp_path / "run").exists()


def test_openai_base_url_with_a_query_string_is_refused_without_echoing_it(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    data = discussion_experiment(factors={"model": ["openai/fake-model"]})
    result = invoke(
        "run",
        write_experiment(data),
        "-o",
        tmp_path / "run",
        env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1?key=LIMAsecret0099", "OPENAI_API_KEY": "k"},
    )
    assert result.exit_code == 2
    assert "OPENAI_BASE_URL" in result.stderr and "query string" in result.stderr
    assert "LIMAsecret0099" not in result.stdout + result.stderr
    assert not (tmp_path / "run").exists()
