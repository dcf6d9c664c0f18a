"""`run` on two replicas, then `status`: calls per replica of the stored conversations."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from conftest import discussion_experiment, invoke


def test_status_shows_calls_per_replica(
    write_experiment: Any, threaded_server: Any, tmp_path: Path
) -> None:
    servers = [threaded_server(latency=0.005), threaded_server(latency=0.005)]
    path = write_experiment(
        discussion_experiment(
            factors={"model": ["openai/fake-model"]},
            endpoints=[{"base_urls": [s.base_url for s in servers], "api_key": "sk-test"}],
        )
    )
    run = tmp_path / "run"
    assert invoke("run", path, "-o", run).exit_code == 0
    result = invoke("status", run)
    assert result.exit_code == 0, result.output
    assert "0 conversation(s) moved" in result.output
    shown = {
        url: int(calls)
        for url, calls in re.findall(r"(http://127\.0\.0\.1:\d+/v1): (\d+) calls", result.output)
    }
    received = {s.base_url: len(s.server.requests) for s in servers}
    assert shown == {url: n for url, n in received.items() if n}
    # 2 questions x (2 agents x 2 rounds + 2 agents x 3 checkpoints) calls in all
    assert sum(shown.values()) == 2 * (4 + 6)
