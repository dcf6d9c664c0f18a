"""Where a plan's assumptions come from: a pilot run's estimate of a contrast (its arms' rates
or means, sds, intra-conversation correlation and paired correlation), or rates stated on the
command line (`--assume fpi_gap.first=0.3`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from backchannel.planning._contrast import Contrast, ContrastEstimate
from backchannel.planning._size import Assumption, paired_sd, proportion_sd

STATED_KEYS = ("first", "second", "sd", "sd_first", "sd_second", "icc", "trials", "correlation")


class AssumptionError(ValueError):
    """An assumption that cannot be built, with what to give instead."""


def parse_stated(texts: Sequence[str], names: Sequence[str]) -> dict[str, dict[str, float]]:
    """`NAME.KEY=VALUE` texts by contrast name and key; an unknown contrast or key, or a value
    that is no number, is an error naming it."""
    found: dict[str, dict[str, float]] = {}
    for text in texts:
        target, sep, value = text.partition("=")
        name, dot, key = target.strip().partition(".")
        if not sep or not dot:
            raise AssumptionError(
                f"--assume {text!r}: write NAME.KEY=VALUE, e.g. fpi_gap.first=0.3"
            )
        if name not in names:
            listed = ", ".join(names) or "none"
            raise AssumptionError(
                f"--assume {text!r}: no contrast {name!r}; this design has {listed}"
            )
        if key not in STATED_KEYS:
            raise AssumptionError(
                f"--assume {text!r}: no key {key!r}; keys are {', '.join(STATED_KEYS)}"
            )
        try:
            number = float(value)
        except ValueError:
            raise AssumptionError(f"--assume {text!r}: {value!r} is not a number") from None
        found.setdefault(name, {})[key] = number
    return found


def stated_assumption(contrast: Contrast, stated: Mapping[str, float]) -> Assumption:
    """The assumption the stated values make: rates (proportions) give their own sds, means
    need `sd` (or `sd_first` and `sd_second`); paired kinds take `correlation` (default 0)."""
    missing = [k for k in ("first", "second") if k not in stated]
    if missing:
        raise AssumptionError(
            f"{contrast.name}: state {' and '.join(f'{contrast.name}.{k}' for k in missing)} "
            f"(--assume), or plan from a pilot run (--pilot RUN)"
        )
    first, second = stated["first"], stated["second"]
    trials, icc = stated.get("trials", 1.0), stated.get("icc", 0.0)
    correlation = stated.get("correlation", 0.0)
    if not -1 <= correlation <= 1 or not 0 <= icc <= 1 or trials < 1:
        raise AssumptionError(
            f"{contrast.name}: correlation lies in [-1, 1], icc in [0, 1], trials is at least 1"
        )
    if contrast.proportion:
        if not (0 <= first <= 1 and 0 <= second <= 1):
            raise AssumptionError(f"{contrast.name}: rates lie between 0 and 1")
        sd_first, sd_second = proportion_sd(first, trials, icc), proportion_sd(second, trials, icc)
    else:
        shared = stated.get("sd", -1.0)
        sd_first = stated.get("sd_first", shared)
        sd_second = stated.get("sd_second", shared)
        if sd_first < 0 or sd_second < 0:
            raise AssumptionError(
                f"{contrast.name}: a mean needs its spread: --assume {contrast.name}.sd=VALUE "
                "(a conversation's sd, at least 0)"
            )
    return Assumption(
        kind=contrast.kind,
        first=first,
        second=second,
        sd_first=sd_first,
        sd_second=sd_second,
        sd_difference=paired_sd(sd_first, sd_second, correlation) if contrast.paired else None,
        trials=trials,
        icc=icc,
        correlation=correlation,
        source="stated",
    )


def pilot_assumption(contrast: Contrast, row: ContrastEstimate) -> Assumption:
    """The assumption a pilot's estimate in one stratum makes: its arms' means and sds, the
    sd of its paired differences, its mean trials and intra-conversation correlation."""
    first, second = row.first, row.second
    where = _where(row.stratum)
    if first.mean is None or second.mean is None or first.sd is None or second.sd is None:
        raise AssumptionError(
            f"{contrast.name}{where}: the pilot has fewer than two conversations with a value in "
            "an arm; run a larger pilot or state the rates (--assume)"
        )
    if contrast.paired and (row.pairs or 0) < 2:
        raise AssumptionError(
            f"{contrast.name}{where}: the pilot has fewer than two pairs; run a larger pilot or "
            "state the rates (--assume)"
        )
    iccs = [a.icc for a in (first, second) if a.icc is not None]
    trials = [a.trials for a in (first, second) if a.trials is not None]
    return Assumption(
        kind=contrast.kind,
        first=first.mean,
        second=second.mean,
        sd_first=first.sd,
        sd_second=second.sd,
        sd_difference=row.sd_difference if contrast.paired else None,
        trials=max(trials) if trials else 1.0,
        icc=max(iccs) if iccs else 0.0,
        correlation=row.correlation or 0.0,
        source="pilot",
    )


def _where(stratum: Mapping[str, Any]) -> str:
    return f" ({', '.join(f'{k}={v}' for k, v in stratum.items())})" if stratum else ""
