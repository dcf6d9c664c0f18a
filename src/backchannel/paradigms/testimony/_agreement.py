"""Agreement of two citation judges on the same statements: exact claim sets, claim precision
and recall of B against A, the endpoints of matched claims, and Cohen's kappa (statsmodels) on
whether a statement cites the key and the second-key testimony directly."""

from __future__ import annotations

from typing import Any

import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa

from backchannel.analysis import RunTables
from backchannel.paradigms.testimony._citations import Claim
from backchannel.paradigms.testimony._graph import records


def _claims(tables: RunTables, judge: str) -> tuple[dict[Any, tuple[Claim, ...] | None], dict]:
    found: dict[Any, tuple[Claim, ...] | None] = {}
    roots: dict[Any, dict[str, str]] = {}
    for record in records(tables, judge):
        roots[record.conversation_id] = {
            "key": record.meta["key"],
            "second_key": record.meta["second_key"],
        }
        for s in record.statements:
            if s.status == "not_labelled":
                continue
            key = (record.conversation_id, s.seq)
            found[key] = s.extraction.claims if s.extraction else None
    return found, roots


def _kappa(pairs: list[tuple[bool, bool]]) -> float:
    table = np.zeros((2, 2))
    for a, b in pairs:
        table[int(a), int(b)] += 1
    n = len(pairs)
    if n == 0:
        return float("nan")
    if float((table.sum(axis=1) * table.sum(axis=0)).sum()) / n**2 == 1:
        return float("nan")  # both judges give the same one answer throughout: undefined
    return float(cohens_kappa(table).kappa)


def citation_agreement(tables: RunTables, judge_a: str, judge_b: str) -> dict[str, Any]:
    """How far judge B's claims agree with judge A's on the statements both labelled."""
    a, roots = _claims(tables, judge_a)
    b, _ = _claims(tables, judge_b)
    shared = sorted(set(a) & set(b))
    both = [k for k in shared if a[k] is not None and b[k] is not None]
    exact = matched = count_a = count_b = same_support = 0
    direct: dict[str, list[tuple[bool, bool]]] = {"key": [], "second_key": []}
    for k in both:
        ca, cb = a[k] or (), b[k] or ()
        keys_a, keys_b = {c.key: c for c in ca}, {c.key: c for c in cb}
        exact += set(keys_a) == set(keys_b)
        common = set(keys_a) & set(keys_b)
        matched += len(common)
        count_a, count_b = count_a + len(keys_a), count_b + len(keys_b)
        same_support += sum(keys_a[c].supports == keys_b[c].supports for c in common)
        for testimony, sender in roots[k[0]].items():
            cited = ("testimony", sender, None)
            direct[testimony].append((cited in keys_a, cited in keys_b))
    return {
        "judge_a": judge_a,
        "judge_b": judge_b,
        "statements": len(shared),
        "both_extracted": len(both),
        "failed_a_only": sum(a[k] is None and b[k] is not None for k in shared),
        "failed_b_only": sum(b[k] is None and a[k] is not None for k in shared),
        "failed_both": sum(a[k] is None and b[k] is None for k in shared),
        "exact_agreement": exact / len(both) if both else float("nan"),
        "claims_a": count_a,
        "claims_b": count_b,
        "precision": matched / count_b if count_b else float("nan"),
        "recall": matched / count_a if count_a else float("nan"),
        "same_endpoint": same_support / matched if matched else float("nan"),
        "kappa_cites_key": _kappa(direct["key"]),
        "kappa_cites_second_key": _kappa(direct["second_key"]),
    }
