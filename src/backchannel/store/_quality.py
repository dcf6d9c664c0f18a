"""How many model answers of a run are usable: empty and unreadable answers are counted, not
hidden, and a run where most of them are unusable says so (and ends with exit 1).

Every stored answer of a model call counts as required (turns, probes, ratings, rankings);
judge labels are counted by the judges' own tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables

UNUSABLE_THRESHOLD = 0.5
"""A run whose share of unusable answers (empty or unreadable) is above this ends with exit 1.

An answer is empty when its text is blank (whatever the call asked for), unreadable when it
has text that could not be parsed into the asked format even after the re-asks."""


def quality_from_row(row: tuple[Any, ...]) -> dict[str, int]:
    answers, empty, unreadable, refused, errors = (int(v) for v in row)
    return {
        "answers": answers,
        "empty": empty,
        "unreadable": unreadable,
        "refused": refused,
        "errors": errors,
    }


def tables_answer_quality(tables: RunTables) -> dict[str, int]:
    """The answer counts of `tables`: those its store kept as it wrote them, else counted from
    its events (exported tables). At 100,000 testimony conversations counting took 2 s."""
    if tables.answer_counts is not None:
        return dict(tables.answer_counts)
    return answer_quality(tables.core_events)


def answer_quality(events: pd.DataFrame) -> dict[str, int]:
    """The answer counts of an events table (for exported tables); the run store keeps the
    same counts per conversation as it stores them (`_rows.quality`)."""
    if events.empty:
        return quality_from_row((0, 0, 0, 0, 0))
    import pandas as pd

    texts = (pd.StringDtype, pd.CategoricalDtype)
    if all(isinstance(events[c].dtype, texts) for c in ("model", "status", "text")):
        return _counted_by_arrow(events)
    return _counted_by_pandas(events)


def _counted_by_arrow(events: pd.DataFrame) -> dict[str, int]:
    """`_counted_by_pandas` on text columns with Arrow's kernels: at 100,000 testimony
    conversations the pandas form took 2.7 s of `metrics` (stripping four million texts)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def texts(column: str) -> pa.Array:
        found = pa.array(events[column])
        return found.dictionary_decode() if pa.types.is_dictionary(found.type) else found

    answered = pc.fill_null(pc.not_equal(texts("model"), ""), False)
    status = texts("status").filter(answered)
    text = texts("text").filter(answered)
    blank = pc.fill_null(pc.equal(pc.utf8_trim(text, characters=" \t\n\r"), ""), True)
    parse_failure = pc.fill_null(pc.equal(status, "parse_failure"), False)
    # A missing status is in neither.
    ok_or_parse_failure = pc.is_in(status, value_set=pa.array(["ok", "parse_failure"]))

    def count(mask: pa.Array) -> int:
        return int(pc.sum(pc.fill_null(mask, False)).as_py() or 0)

    return quality_from_row(
        (
            count(answered),
            count(pc.and_(ok_or_parse_failure, blank)),
            count(pc.and_(parse_failure, pc.invert(blank))),
            count(pc.equal(status, "refusal")),
            count(pc.equal(status, "error")),
        )
    )


def _counted_by_pandas(events: pd.DataFrame) -> dict[str, int]:
    """Answered rows (a model was called), of them: empty (ok or parse failure with blank text),
    unreadable (parse failure with text), refused and failed; for columns of any dtype."""
    # Only the three columns read are filtered: taking every column's rows copied the texts.
    answered = (events["model"].astype("str").fillna("") != "").to_numpy(dtype=bool)
    status = events["status"][answered].astype(str)
    blank = events["text"][answered].astype("str").fillna("").str.strip(" \t\n\r") == ""
    return quality_from_row(
        (
            int(answered.sum()),
            int((status.isin(["ok", "parse_failure"]) & blank).sum()),
            int(((status == "parse_failure") & ~blank).sum()),
            int((status == "refusal").sum()),
            int((status == "error").sum()),
        )
    )


def unusable_share(quality: dict[str, int]) -> float:
    """Empty plus unreadable answers over all answers (0 for a run without answers)."""
    if not quality["answers"]:
        return 0.0
    return (quality["empty"] + quality["unreadable"]) / quality["answers"]


def describe_quality(quality: dict[str, int]) -> str:
    """`answers 40: 2 empty, 1 unreadable, 0 refused, 0 failed calls`."""
    return (
        f"answers {quality['answers']}: {quality['empty']} empty, {quality['unreadable']} "
        f"unreadable, {quality['refused']} refused, {quality['errors']} failed calls"
    )


def unusable_message(quality: dict[str, int]) -> str | None:
    """A warning naming the cause when the unusable share is above the threshold, else None."""
    share = unusable_share(quality)
    if share <= UNUSABLE_THRESHOLD:
        return None
    return (
        f"{share:.0%} of the model answers are unusable ({quality['empty']} empty, "
        f"{quality['unreadable']} unreadable of {quality['answers']}), above the "
        f"{UNUSABLE_THRESHOLD:.0%} threshold: figures built on them are not meaningful. Check the "
        "model and its server (a wrong chat template, too few max_tokens, a model too small for "
        "the format)"
    )
