"""`divergence` gives exactly what its earlier row-by-row form gave (tests/analysis/_reference),
on random and edge-case stance pairs: every figure, to the last bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from backchannel.analysis import STANCE_PAIR_COLUMNS, Design, divergence

from . import _reference

REASONS = ("no private probe", "unreadable answer", "refused")


def random_run(
    seed: int, conversations: int = 24, *, paired: bool = True, roles: int = 2, unknown: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Stance pairs and conversations of a two-factor design (k, framing), with skipped
    pairs, several roles and rounds; `unknown` pairs name conversations the run lacks."""
    rng = np.random.default_rng(seed)
    units, rows = [], []
    for index in range(conversations):
        if paired:  # every item once in each of the four cells
            k, framing, item = (0, 3)[index % 2], ("neutral", "loaded")[index // 2 % 2], index // 4
        else:
            k, framing = int(rng.choice([0, 3])), str(rng.choice(["neutral", "loaded"]))
            item = index
        cid = f"c{rng.integers(10**6)}-{index}"
        units.append(
            {
                "conversation_id": cid,
                "cell": f'{{"framing": "{framing}", "k": {k}}}',
                "item_id": f"q{item}",
                "replicate": 0,
                "k": k,
                "framing": framing,
                "status": "done",
            }
        )
        for _ in range(int(rng.integers(0, 7))):
            rows.append(_pair(rng, cid, roles))
    for index in range(unknown):
        rows.append(_pair(rng, f"gone-{index}", roles))
    order = rng.permutation(len(rows))
    pairs = pd.DataFrame([rows[i] for i in order], columns=list(STANCE_PAIR_COLUMNS))
    for column in ("public_moved", "private_moved", "agree"):
        pairs[column] = pairs[column].astype("boolean")
    pairs["probe_seq"] = pairs["probe_seq"].astype("Int64")
    pairs["conversation_id"] = pairs["conversation_id"].astype("str")
    pairs["role"] = pairs["role"].astype("str")
    return pairs, pd.DataFrame(units)


def _pair(rng: np.random.Generator, cid: str, roles: int) -> dict[str, object]:
    skipped = str(rng.choice(REASONS)) if rng.random() < 0.2 else None
    flags = [pd.NA] * 3 if skipped else [bool(rng.random() < share) for share in (0.3, 0.4, 0.6)]
    rnd = int(rng.integers(1, 4))
    return {
        "conversation_id": cid,
        "agent": f"a{rng.integers(3)}",
        "role": f"r{rng.integers(roles)}",
        "round": rnd,
        "turn_seq": rnd * 10,
        "probe_seq": pd.NA if skipped else rnd * 10 + 1,
        "public_moved": flags[0],
        "private_moved": flags[1],
        "agree": flags[2],
        "skipped": skipped,
    }


def same(pairs: pd.DataFrame, design: Design, conversations: pd.DataFrame) -> None:
    found = divergence(pairs, design, conversations).model_dump()
    expected = _reference.divergence(pairs, design, conversations).model_dump()
    assert found == expected


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("paired", [True, False])
def test_random_runs(seed: int, paired: bool) -> None:
    pairs, units = random_run(seed, paired=paired, unknown=seed % 3)
    found = divergence(pairs, Design(("k", "framing")), units)
    assert any(t.paired for t in found.tests) == paired
    same(pairs, Design(("k", "framing")), units)
    same(pairs, Design(("k",)), units)


def test_large_run_with_many_conversations_per_cell() -> None:
    pairs, units = random_run(99, conversations=400, roles=3)
    same(pairs, Design(("k", "framing")), units)


def test_no_factors_one_role_and_an_index_that_is_not_the_rows_places() -> None:
    pairs, units = random_run(5, roles=1)
    units.index = np.arange(len(units))[::-1] * 7
    same(pairs, Design(()), units)
    same(pairs, Design(("framing",)), units)


def test_edge_cases() -> None:
    pairs, units = random_run(11)
    design = Design(("k", "framing"))
    same(pairs.iloc[:0], design, units)  # no pairs
    same(pairs, design, units.iloc[:1])  # one conversation known
    one = pairs[pairs["conversation_id"] == pairs["conversation_id"].iloc[0]]
    same(one, design, units)  # a single conversation's pairs
    everything_skipped = pairs.assign(
        public_moved=pd.NA, private_moved=pd.NA, agree=pd.NA, skipped="refused"
    ).astype({c: "boolean" for c in ("public_moved", "private_moved", "agree")})
    same(everything_skipped, design, units)
    repeated = units.assign(replicate=0)  # (item, replicate) repeats: nothing is paired
    same(pairs, design, repeated)


def test_reference_is_what_is_compared() -> None:
    # The comparison can fail: a changed figure is told apart.
    pairs, units = random_run(3)
    found = divergence(pairs, Design(("k",)), units).model_dump()
    changed = pairs.assign(public_moved=~pairs["public_moved"])
    assert found != _reference.divergence(changed, Design(("k",)), units).model_dump()
