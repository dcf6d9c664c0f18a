"""How to store prompts: candidate encodings measured side by side on the prompts of real runs.

For each run directory given: bytes per conversation of its prompts under each encoding, and
the CPU each takes to write them (`time.process_time`, per call). The encodings: the prompt JSON
as schema 3 stored it; each prompt compressed alone; a conversation's prompts compressed
together (zlib, zstd at several levels); with a zstd dictionary (trained by zstd on the first
conversations, or the first conversation's own prompts as a raw dictionary, as the store does);
a delta against the same agent's previous prompt, alone and compressed. docs/data-schema.md
("How prompts are stored") records the results and the choice.

    python bench/store_encodings.py RUN [RUN ...]
    python bench/store_encodings.py --quick      # builds a small run first (the smoke test)
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zstandard

from backchannel import open_run, run

_QUICK = """\
name: encodings-quick
paradigm: peer_pressure
seed: 13
factors:
  model: [sim/population]
  k: [0, 1]
settings:
  datasets:
    - {name: counterfact, limit: 6}
  n_agents: 4
  rounds: 3
"""


def documents(
    directory: Path,
) -> tuple[dict[str, bytes], dict[str, bytes], list[str], int, float]:
    """Per conversation (in run order): its prompts as `seq<TAB>json` lines, and as deltas
    against the same agent's previous prompt; the order; the number of calls; the CPU seconds
    the deltas took."""
    tables = open_run(directory).tables
    prompts = tables.prompts
    agents = dict(
        zip(
            zip(tables.core_events["conversation_id"], tables.core_events["seq"], strict=True),
            tables.core_events["agent"],
            strict=True,
        )
    )
    plain: dict[str, list[str]] = {}
    delta: dict[str, list[str]] = {}
    last: dict[tuple[str, str], str] = {}
    delta_cpu = 0.0
    for cid, seq, text in prompts[["conversation_id", "seq", "prompt"]].itertuples(index=False):
        plain.setdefault(cid, []).append(f"{seq}\t{text}")
        start = time.process_time()
        key = (cid, agents[(cid, seq)])
        shared = _common_prefix(last.get(key, ""), text)
        delta.setdefault(cid, []).append(f"{seq}\t{shared}\t{text[shared:]}")
        last[key] = text
        delta_cpu += time.process_time() - start
    order = [c for c in tables.conversations["conversation_id"] if c in plain]
    encode = {c: "\n".join(plain[c]).encode() for c in order}
    deltas = {c: "\n".join(delta[c]).encode() for c in order}
    return encode, deltas, order, len(prompts), delta_cpu


def _common_prefix(a: str, b: str) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _each_alone(document: bytes) -> bytes:
    return b"".join(zlib.compress(line, 6) for line in document.split(b"\n"))


def measure(directory: Path) -> tuple[str, list[tuple[str, float, float, float]]]:
    plain, deltas, order, calls, delta_cpu = documents(directory)
    raw = sum(len(plain[c]) for c in order)
    rows: list[tuple[str, float, float, float]] = []

    def row(
        name: str, encode: Callable[[bytes], bytes], source: dict[str, bytes], skip: int = 0
    ) -> None:
        chosen = order[skip:]
        start = time.process_time()
        size = sum(len(encode(source[c])) for c in chosen)
        cpu = time.process_time() - start
        share = sum(len(plain[c]) for c in chosen)
        rows.append((name, size / len(chosen), 100 * size / share, 1e6 * cpu / calls))

    row("prompt JSON (schema 3)", lambda b: b, plain)
    row("zlib-6, each prompt alone", _each_alone, plain)
    for level in (1, 6, 9):
        row(f"zlib-{level}, per conversation", functools.partial(zlib.compress, level=level), plain)
    for level in (1, 3, 9, 19):
        compress = zstandard.ZstdCompressor(level=level).compress
        row(f"zstd-{level}, per conversation", compress, plain)
    first = max(1, min(32, len(order) // 10))
    samples: list[Any] = [line for c in order[:first] for line in plain[c].split(b"\n")]
    try:
        trained = zstandard.train_dictionary(16 * 1024, samples)
        compressor = zstandard.ZstdCompressor(level=3, dict_data=trained)
        row(f"zstd-3 + 16 KB dictionary trained on {first}", compressor.compress, plain, first)
    except zstandard.ZstdError as error:
        print(f"{directory}: no trained dictionary ({error})", file=sys.stderr)
    own = zstandard.ZstdCompressionDict(plain[order[0]], dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    compressor = zstandard.ZstdCompressor(level=3, dict_data=own, write_checksum=True)
    row("zstd-3 + first conversation as dictionary (the store)", compressor.compress, plain, 1)
    row("delta vs the agent's previous prompt", lambda b: b, deltas)
    name, size, share, _ = rows[-1]
    rows[-1] = (name, size, share, 1e6 * delta_cpu / calls)
    for level in (1, 6):
        row(f"delta + zlib-{level}", functools.partial(zlib.compress, level=level), deltas)
    for level in (1, 3, 9):
        row(f"delta + zstd-{level}", zstandard.ZstdCompressor(level=level).compress, deltas)
    title = (
        f"{directory}: {len(order):,} conversations, {calls:,} prompts, "
        f"{raw / len(order):,.0f} bytes of prompt JSON per conversation"
    )
    return title, rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path)
    parser.add_argument("--quick", action="store_true", help="measure a small run made here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        runs = list(args.runs)
        if args.quick or not runs:
            experiment = Path(scratch) / "quick.yaml"
            experiment.write_text(_QUICK)
            run(experiment, Path(scratch) / "run")
            runs.append(Path(scratch) / "run")
        for directory in runs:
            title, rows = measure(directory)
            print(title)
            print("| encoding | bytes / conversation | of the JSON | CPU µs / call |")
            print("|---|---:|---:|---:|")
            for name, size, share, cpu in rows:
                print(f"| {name} | {size:,.0f} | {share:.2f} % | {cpu:.1f} |")
            print()


if __name__ == "__main__":
    main()
