"""The validity checks a reviewer asks for, the same for every paradigm (docs/validity.md).

- Experiment awareness: the share of agents whose answer to the final awareness probe names the
  study's manipulation (labels of the `awareness` judge), per cell and role, with a Wilson
  interval; failed probes and verdicts are counted by reason, never dropped.
- Position and order effects: how often an answer is the first option shown, the position of the
  first speaker or that of the last speaker, against the rate chance predicts, per cell, with
  an exact test. A paradigm declares its answers through `Paradigm.order_answers` (rows of
  `ORDER_COLUMNS`); the kit never reads a paradigm's events itself.

Chance for one answer: first option, 1 / (options shown), the rate if the shown order carries no
information about the answer; a speaker check, the share of the speakers before the answer whose
position is the answer, the rate if the order they spoke in were a random permutation. Answers
differ in their chance, so the count of hits is tested against a Poisson-binomial distribution
(an exact two-sided test: the probabilities of all counts no more likely than the observed);
with one chance for every answer it is the binomial test (`scipy.stats.binomtest`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis._intervals import wilson_interval
from backchannel.analysis._tables import RunTables
from backchannel.analysis._typed import CellRow, Design, Record, cell_groups

AWARENESS = "awareness"
"""The awareness probe's name and the judge its labels are stored under."""
AWARE = "aware"
ORDER_COLUMNS = ("conversation_id", "seq", "agent", "role", "options", "speakers", "answer")
"""What `Paradigm.order_answers` returns, one row per answer: the answering event (`seq`) and
its agent and role; `options`, the options in the order shown (None: no options); `speakers`,
the positions of the speakers before the answer in the order they spoke, each in the answer's
terms (None: no speaker order); `answer`, the option or position answered (None: no valid
answer, counted as excluded)."""
ORDER_CHECKS = ("first_option", "first_speaker", "last_speaker")
_TOLERANCE = 1 + 1e-7  # scipy.stats.binomtest's relative tolerance for "as likely"


class AwarenessRow(CellRow):
    """Experiment awareness in one cell and role."""

    keys = ("role",)
    role: str
    n_asked: int
    """Awareness probes asked."""
    n_judged: int
    """Answers with a valid verdict: the rate's denominator."""
    n_aware: int
    rate: float | None
    low: float | None
    high: float | None
    failures: dict[str, int]
    """Probes or verdicts without a valid label, by reason (`probe: refusal`, `judge:
    parse_failure`, `not judged`)."""


class OrderRow(CellRow):
    """One order check in one cell: hits against chance."""

    keys = ("check",)
    check: str
    n: int
    """Answers the check applies to."""
    hits: int
    rate: float | None
    low: float | None
    high: float | None
    chance: float | None
    """The rate chance predicts: the mean of the answers' chances."""
    p_value: float | None
    test: str | None
    """`binomial` (one chance for every answer) or `poisson-binomial`."""
    skipped: str | None
    excluded: dict[str, int]
    """Answers left out, by reason (no valid answer, answer not among the options)."""


class Validity(Record):
    """The validity section of every paradigm's metrics (`Metrics.validity`)."""

    awareness: list[AwarenessRow]
    awareness_skipped: str | None = None
    """Why there are no awareness rows (the probe was not asked)."""
    order: list[OrderRow]
    order_skipped: str | None = None
    """Why there are no order rows (the paradigm declares no answers, or none were given)."""


def validity(tables: RunTables, answers: pd.DataFrame | str | None) -> Validity:
    """Both checks of a run; `answers` is what the paradigm's `order_answers` returned (a text:
    why it could not)."""
    design = Design.of(tables)
    levels = design.levels(tables.done_conversations())
    awareness = awareness_rows(tables, design, levels)
    if isinstance(answers, str):
        order: list[OrderRow] = []
        order_skipped: str | None = answers
    elif answers is None:
        order, order_skipped = [], "the paradigm declares no option or speaker order"
    else:
        order = order_rows(answers, design, levels)
        order_skipped = None if order else "no answers to check"
    data: dict[str, Any] = {"awareness": awareness, "order": order}
    if not awareness:
        data["awareness_skipped"] = "the awareness probe was not asked (awareness_probe: false)"
    if order_skipped is not None:
        data["order_skipped"] = order_skipped
    return Validity.model_validate(data)


# awareness ----------------------------------------------------------------------------------
def awareness_rows(
    tables: RunTables, design: Design, levels: Mapping[str, Mapping[str, Any]]
) -> list[AwarenessRow]:
    """The awareness rate per cell and role: aware verdicts over valid verdicts."""
    events = tables.done_core_events()  # no event meta: the kit reads none
    probes = events[
        (events["kind"] == "probe")
        & (events["name"] == AWARENESS)
        & (events["channel"] == "private")
    ]
    if probes.empty:
        return []
    labels = tables.labels_for(AWARENESS)
    verdicts = {
        (str(c), int(s)): (status, label)
        for c, s, status, label in zip(
            labels["conversation_id"],
            labels["event_seq"],
            labels["status"],
            labels["label"],
            strict=True,
        )
    }
    rows = []
    for cell, group in cell_groups(probes, design.by(extra=("role",)), levels):
        aware = judged = 0
        failures: Counter[str] = Counter()
        for conversation, seq, status in zip(
            group["conversation_id"], group["seq"], group["status"], strict=True
        ):
            if status != "ok":
                failures[f"probe: {status}"] += 1
                continue
            verdict = verdicts.get((str(conversation), int(seq)))
            if verdict is None:
                failures["not judged"] += 1
            elif verdict[0] != "ok" or verdict[1] is None:
                failures[f"judge: {verdict[0]}"] += 1
            else:
                judged += 1
                aware += verdict[1] == AWARE
        interval = wilson_interval(aware, judged)
        rows.append(
            AwarenessRow.model_validate(
                {
                    **cell,
                    "n_asked": len(group),
                    "n_judged": judged,
                    "n_aware": aware,
                    "rate": interval.estimate if judged else None,
                    "low": interval.low if judged else None,
                    "high": interval.high if judged else None,
                    "failures": dict(sorted(failures.items())),
                }
            )
        )
    return rows


# order --------------------------------------------------------------------------------------
_NOT_APPLIED, _COUNTED, _NO_ANSWER, _NOT_SHOWN = 0, 1, 2, 3
"""How an answer counts in a check: not at all (nothing shown), or as an answer, or excluded."""
_EXCLUDED = {_NO_ANSWER: "no valid answer", _NOT_SHOWN: "answer not among the options"}
Outcomes = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Per answer: how it counts (`_COUNTED`...), whether it is a hit, its chance."""


def order_rows(
    answers: pd.DataFrame, design: Design, levels: Mapping[str, Mapping[str, Any]]
) -> list[OrderRow]:
    """Every order check per cell, over the answers it applies to: each answer's outcome is
    worked out once per check, and each cell sums the outcomes of its answers."""
    missing = [c for c in ORDER_COLUMNS if c not in answers.columns]
    if missing:
        raise ValueError(f"order answers lack the columns {missing}")
    codes, ids = pd.factorize(answers["conversation_id"].astype(str))
    # One look-up per conversation, not per answer; a missing id (code -1) has no levels.
    listed = np.array([cid in levels for cid in ids.tolist()] + [False], dtype=bool)
    known = answers[listed[codes]].reset_index(drop=True)
    outcomes = answer_outcomes(known, ORDER_CHECKS)
    rows = []
    for cell, group in cell_groups(known, design.by(), levels):
        positions = group.index.to_numpy()  # the index of `known` is its row positions
        for check in ORDER_CHECKS:
            counts, hits, chances = outcomes[check]
            row = _summarised(check, (counts[positions], hits[positions], chances[positions]))
            if row is not None:
                rows.append(OrderRow.model_validate({**cell, **row}))
    return rows


def order_check(answers: pd.DataFrame, check: str) -> dict[str, Any] | None:
    """One check over `answers` (None: it applies to none of them): hits, chance and test."""
    if check not in ORDER_CHECKS:
        raise ValueError(f"unknown order check {check!r}; expected one of {ORDER_CHECKS}")
    return _summarised(check, answer_outcomes(answers, (check,))[check])


def answer_outcomes(answers: pd.DataFrame, checks: Sequence[str]) -> dict[str, Outcomes]:
    """Each answer's outcome in each check, in row order. Many answers share their order and
    answer (the same options for a whole story, a few patterns of positions), so each distinct
    pair of equal lists and answer is worked out once, by the check's rule, and given to every
    answer with that pair."""
    for check in checks:
        if check not in ORDER_CHECKS:
            raise ValueError(f"unknown order check {check!r}; expected one of {ORDER_CHECKS}")
    answer_codes, answer_values = _answer_codes(answers["answer"])
    width = len(answer_values)
    coded: dict[str, tuple[np.ndarray, list[list[Any]]]] = {}
    found: dict[str, Outcomes] = {}
    for check in checks:
        column = "options" if check == "first_option" else "speakers"
        if column not in coded:
            coded[column] = _list_codes(answers[column])
        shown_codes, shown = coded[column]
        pairs, keys = pd.factorize(shown_codes * width + answer_codes)
        each = [
            _outcome(check, shown[key // width], key % width, answer_values[key % width])
            for key in keys.tolist()
        ]
        found[check] = (
            np.array([o[0] for o in each], dtype=np.int8)[pairs],
            np.array([o[1] for o in each], dtype=bool)[pairs],
            np.array([o[2] for o in each], dtype=float)[pairs],
        )
    return found


def _outcome(check: str, shown: list[Any], code: int, answer: Any) -> tuple[int, bool, float]:
    """One answer's outcome (`code` 0: no valid answer)."""
    if not shown:
        return _NOT_APPLIED, False, 0.0
    if not code:
        return _NO_ANSWER, False, 0.0
    if check == "first_option":
        if answer not in shown:
            return _NOT_SHOWN, False, 0.0
        return _COUNTED, bool(shown[0] == answer), 1 / len(shown)
    position = shown[0] if check == "first_speaker" else shown[-1]
    return _COUNTED, bool(position == answer), sum(p == answer for p in shown) / len(shown)


def _summarised(check: str, outcomes: Outcomes) -> dict[str, Any] | None:
    """A check's row from its answers' outcomes (None: it applies to none of them)."""
    counts, hits, chance = outcomes
    if not bool((counts != _NOT_APPLIED).any()):
        return None
    counted = counts == _COUNTED
    n, count = int(counted.sum()), int(hits[counted].sum())
    excluded = {reason: int((counts == code).sum()) for code, reason in _EXCLUDED.items()}
    row: dict[str, Any] = {
        "check": check,
        "n": n,
        "hits": count,
        "excluded": dict(sorted((r, k) for r, k in excluded.items() if k)),
        "rate": None,
        "low": None,
        "high": None,
        "chance": None,
        "p_value": None,
        "test": None,
        "skipped": None,
    }
    if not n:
        row["skipped"] = "no valid answers"
        return row
    chances: list[float] = chance[counted].tolist()  # the answers' chances, in row order
    interval = wilson_interval(count, n)
    row.update(
        rate=interval.estimate,
        low=interval.low,
        high=interval.high,
        chance=float(np.mean(chances)),
        p_value=poisson_binomial_test(count, chances),
        test="binomial" if len(set(chances)) == 1 else "poisson-binomial",
    )
    return row


def _answer_codes(column: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Each answer's code and one value per code; code 0 is no valid answer (None or NaN)."""
    codes, uniques = pd.factorize(column)  # every missing value: -1
    codes = codes.astype(np.int64) + 1
    values: list[Any] = [None, *uniques.tolist()]
    missing = np.flatnonzero(codes == 0)
    for row, value in zip(missing.tolist(), column.iloc[missing].tolist(), strict=True):
        if not (value is None or (isinstance(value, float) and np.isnan(value))):
            codes[row] = len(values)  # another missing value (pd.NA, NaT): an answer
            values.append(value)
    return codes, values


def _list_codes(column: pd.Series) -> tuple[np.ndarray, list[list[Any]]]:
    """Each row's code of equal lists and one list per code (`_listed`). Rows often hold the
    same list object, so each object is read once."""
    values = column.tolist()
    objects = np.fromiter(map(id, values), dtype=np.uint64, count=len(values))
    by_object, _ = pd.factorize(objects)
    _, first = np.unique(by_object, return_index=True)
    known: dict[tuple[Any, ...], int] = {}
    lists: list[list[Any]] = []
    codes = np.empty(len(first), dtype=np.int64)
    for i, row in enumerate(first.tolist()):
        shown = _listed(values[row])
        try:
            code = known.setdefault(tuple(shown), len(lists))
        except TypeError:  # unhashable items: a code of its own
            code = len(lists)
        if code == len(lists):
            lists.append(shown)
        codes[i] = code
    return codes[by_object], lists


def _listed(value: Any) -> list[Any]:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    return list(value)


def poisson_binomial_pmf(chances: Sequence[float]) -> np.ndarray:
    """P(K = k), k = 0..n, for a sum of independent Bernoulli draws with these chances: the
    convolution of one binomial per distinct chance (scipy), so a cell of many answers with few
    distinct chances costs about n per chance rather than n squared."""
    from scipy.stats import binom

    values = np.asarray(list(chances), dtype=float)
    bad = values[(values < 0) | (values > 1) | np.isnan(values)]
    if len(bad):
        raise ValueError(f"a chance must lie in [0, 1], got {bad[0]}")
    pmf, start = np.ones(1), 0
    for p, n in zip(*np.unique(values, return_counts=True), strict=True):
        part = binom.pmf(np.arange(n + 1), n, p)
        (support,) = np.nonzero(part)
        # Only the counts whose probability is not an exact 0 take part: the terms left out
        # are exact zeros, so the sum is the same and the cost falls from n squared to about
        # the product of the binomials' widths (tens of standard deviations each).
        pmf = np.convolve(pmf, part[support[0] : support[-1] + 1])
        start += int(support[0])
    full = np.zeros(len(values) + 1)
    full[start : start + len(pmf)] = pmf
    return full


def poisson_binomial_test(hits: int, chances: Sequence[float]) -> float:
    """Exact two-sided p-value of `hits` successes: the total probability of the counts no more
    likely than it (with equal chances, `scipy.stats.binomtest(...).pvalue`)."""
    if not 0 <= hits <= len(chances):
        raise ValueError(f"need 0 <= hits <= {len(chances)}, got {hits}")
    pmf = poisson_binomial_pmf(chances)
    observed = pmf[hits]
    return float(min(1.0, pmf[pmf <= observed * _TOLERANCE].sum()))
