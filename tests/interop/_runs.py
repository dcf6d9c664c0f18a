"""Runs for the interop tests: offline examples on the simulated population, and a hand-built
run (through the run store's public API) with what the examples lack: a re-ask in a prompt,
reasoning, a failed call, a cache hit, a direct message, a failed and an incomplete
conversation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import invoke

from backchannel.backends import UsageMeter
from backchannel.engine import ConversationSpec, Event, Item, Label
from backchannel.store import RunStore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example_run(directory: Path, example: str, *extra: str) -> Path:
    """`backchannel run examples/EXAMPLE -o DIRECTORY --model sim/population ...`."""
    result = invoke("run", EXAMPLES / example, "-o", directory, "--model", "sim/population", *extra)
    assert result.exit_code == 0, result.stderr
    return directory


def reseeded_quickstart(directory: Path, seed: int) -> Path:
    """The quickstart with another experiment seed (another run of the same design)."""
    text = (EXAMPLES / "quickstart.yaml").read_text(encoding="utf-8")
    assert "\nseed: 7\n" in text
    path = directory.with_suffix(".yaml")
    path.write_text(text.replace("\nseed: 7\n", f"\nseed: {seed}\n"), encoding="utf-8")
    result = invoke("run", path, "-o", directory, "--model", "sim/population")
    assert result.exit_code == 0, result.stderr
    return directory


REASK = [
    ["system", "You are Ann."],
    ["user", "What is the answer?"],
    ["assistant", "maybe"],
    ["user", "Answer with one word."],
]


def _event(seq: int, kind: str, name: str, round_: int, turn: int | None, agent: str,
           channel: str, text: str, **extra: Any) -> Event:  # fmt: skip
    prompt = extra.pop("prompt", [["system", f"You are {agent}."], ["user", f"seq {seq}"]])
    meta = {"prompt": prompt, "retries": extra.pop("retries", 0), **extra.pop("meta", {})}
    return Event(
        seq,
        kind,
        name,
        round_,
        turn,
        agent,
        "member",
        channel,  # type: ignore[arg-type]
        text=text,
        model=extra.pop("model", "sim/a"),
        prompt_tokens=extra.pop("prompt_tokens", 7),
        completion_tokens=extra.pop("completion_tokens", 2),
        meta=meta,
        **extra,
    )


def hand_built_run(directory: Path) -> Path:
    """Two cells (model=sim/a, model=sim/b): three conversations in the first (one incomplete),
    one failed conversation in the second."""
    store = RunStore(directory, create=True)
    store.write_manifest(
        {
            "run_id": "hand-built",
            "name": "hand built",
            "paradigm": "discussion",
            "seed": 3,
            "factors": ["model"],
            "package_version": "9.9.9",
            "created_at": 1_700_000_000.0,
            "config_resolved": {"factors": {"model": ["sim/a", "sim/b"]}, "replicates": 2},
        }
    )
    events = [
        Event(0, "message", "opening", 0, 0, "moderator", "moderator", "public", text="Hello all"),
        _event(1, "message", "turn", 1, 0, "Ann", "public", "I think 4.", reasoning="2+2",
               reasoning_tokens=3, latency_s=0.5),
        _event(2, "message", "turn", 1, 1, "Ben", "direct", "Psst, it is 5.",
               meta={"recipients": ["Ann"]}, cached=True),
        _event(3, "probe", "answer", 1, None, "Ann", "private", "4", prompt=REASK, retries=2),
        _event(4, "probe", "answer", 1, None, "Ben", "private", "", status="error",
               meta={"error": "server said no"}),
    ]  # fmt: skip
    labels = [
        Label(3, "rule", "true", "ok", "true", "rule"),
        Label(4, "rule", None, "parse_failure", "??", "rule"),
        Label(1, "rule", "endorse", "ok", "endorse", "rule"),
    ]
    item = Item("q1", {"question": "What is 2+2?"})
    spec = ConversationSpec("model=sim/a/q1/0", "discussion", {"model": "sim/a"}, "model=sim/a",
                            item, 0, 11)  # fmt: skip
    store.commit_conversation(spec, 0, events, _usage(), {"agents": ["Ann", "Ben"]}, labels=labels)
    again = ConversationSpec("model=sim/a/q1/1", "discussion", {"model": "sim/a"}, "model=sim/a",
                             item, 1, 12)  # fmt: skip
    store.commit_conversation(again, 1, events[:2], _usage(), {}, status="incomplete")
    other = ConversationSpec("model=sim/a/q2/0", "discussion", {"model": "sim/a"}, "model=sim/a",
                             Item("q2", {"question": "Capital of France?"}), 0, 13)  # fmt: skip
    store.commit_conversation(other, 2, events[:1], _usage(), {})
    failed = ConversationSpec("model=sim/b/q1/0", "discussion", {"model": "sim/b"}, "model=sim/b",
                              item, 0, 14)  # fmt: skip
    store.commit_conversation(failed, 3, [], _usage(), {}, status="failed", error="it broke")
    store.close()
    return directory


def _usage() -> UsageMeter:
    usage = UsageMeter()
    usage.model("sim/a").calls = 1
    return usage
