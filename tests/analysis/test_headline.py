"""The headline's study layout and the comparison with a study's published values."""

from __future__ import annotations

from backchannel.analysis import (
    Headline,
    HeadlineValue,
    Study,
    StudyValue,
    compare_study,
    comparison_frame,
)


def _headline() -> Headline:
    def value(model: str, k: int, estimate: float, low: float, high: float) -> HeadlineValue:
        return HeadlineValue(
            cell={"model": model, "k": k},
            measure="FPI",
            estimate=estimate,
            low=low,
            high=high,
            n=40,
        )

    return Headline(
        title="FPI by model and k",
        rows=[
            value("m1", 0, 0.0, 0.0, 0.05),
            value("m1", 3, 0.6, 0.5, 0.7),
            value("m2", 3, 0.3, 0.2, 0.4),
            HeadlineValue(
                cell={"model": "m2", "k": 0}, measure="FPI", estimate=None, skipped="no probe"
            ),
        ],
        index=["model"],
        columns=["k"],
    )


def test_the_pivot_has_rows_by_index_and_columns_by_measure_and_key() -> None:
    pivot = _headline().pivot()
    assert list(pivot.columns) == ["model", "FPI k=0", "FPI k=3"]
    assert pivot.to_dict(orient="records") == [
        {"model": "m1", "FPI k=0": "0 [0, 0.05] n=40", "FPI k=3": "0.6 [0.5, 0.7] n=40"},
        {"model": "m2", "FPI k=0": "- (no probe)", "FPI k=3": "0.3 [0.2, 0.4] n=40"},
    ]


def test_a_published_value_is_compared_with_every_run_model_in_its_cell() -> None:
    study = Study(
        citation="A study (2026)",
        values=[
            StudyValue(measure="FPI", cell={"k": 3}, value=0.605, model="pooled", where="Fig. 2"),
            StudyValue(measure="FPI", cell={"k": 1}, value=0.448, model="pooled"),
        ],
    )
    rows = compare_study(_headline(), study)
    # k = 3: inside m1's [0.5, 0.7], outside m2's [0.2, 0.4]; k = 1 is not in the run.
    assert [(r.run_cell.get("model"), r.inside) for r in rows] == [
        ("m1", True),
        ("m2", False),
        (None, None),
    ]
    frame = comparison_frame(rows)
    assert frame["inside"].tolist() == ["yes", "no", "-"]
    assert frame["run cell"].tolist()[-1] == "no such cell"


def test_the_pivot_orders_columns_by_measure_then_level_not_by_arrival() -> None:
    def value(measure: str, k: int) -> HeadlineValue:
        return HeadlineValue(cell={"model": "m", "k": k}, measure=measure, estimate=0.5, n=2)

    # Cells arrive k = 1 first (a group size without k = 0), then 0 and 3; a second measure
    # interleaved: each measure keeps its place, its levels in natural order.
    rows = [value("FPI", 1), value("ratio", 1), value("FPI", 3), value("FPI", 0), value("ratio", 0)]
    headline = Headline(title="t", rows=rows, index=["model"], columns=["k"])
    assert list(headline.pivot().columns) == [
        "model",
        "FPI k=0",
        "FPI k=1",
        "FPI k=3",
        "ratio k=0",
        "ratio k=1",
    ]
    assert [headline.label(v) for v in headline.ordered()][:2] == ["FPI k=0", "FPI k=1"]
