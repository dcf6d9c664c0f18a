"""`metrics` tables: one table per section, constant columns and shared prefixes said once,
column groups that fit the terminal, long form beyond that, and short previews."""

from __future__ import annotations

import io

from rich.console import Console

from backchannel.cli._metrics_view import (
    Section,
    column_groups,
    condensed,
    long_form,
    print_metrics,
    render,
    sections,
)

RECORDS = [
    {
        "model": f"sim/population#{m}",
        "group": "participants",
        "checkpoint": c,
        "truth": {"estimate": 0.5, "low": 0.1, "high": 0.9, "n": 6, "k": 3},
        "share": 0.25,
        "share_low": 0.1,
        "share_high": 0.4,
    }
    for m in ("trusting", "wary")
    for c in ("T0", "R3")
]


def test_a_list_of_records_is_one_table_with_intervals_as_cells() -> None:
    (summary, table) = list(sections({"runs": 4, "outcome_rates": RECORDS}))
    assert summary.rows == [{"name": "runs", "value": 4}]
    assert table.title == "outcome_rates"
    assert table.keys == ["model", "group", "checkpoint"]
    assert table.columns == ["truth", "share"]
    assert table.rows[0]["share"] == {"estimate": 0.25, "low": 0.1, "high": 0.4}


def test_constant_columns_and_shared_prefixes_are_said_once() -> None:
    (_, table) = list(sections({"runs": 4, "outcome_rates": RECORDS}))
    short = condensed(table)
    assert short.keys == ["model", "checkpoint"]
    assert [r["model"] for r in short.rows] == ["…trusting", "…trusting", "…wary", "…wary"]
    assert short.columns == ["truth", "share"]  # measures stay, even when equal in every row
    assert "every row: group=participants" in short.notes
    assert "model: every value starts with 'sim/population#' (shown as …)" in short.notes


def test_columns_are_grouped_to_fit_and_long_form_always_fits() -> None:
    rows = [{"key": "a", **{f"m{i}": 0.123456 for i in range(20)}}]
    section = Section("wide", ["key"], [f"m{i}" for i in range(20)], rows)
    groups = column_groups(section, 60)
    assert len(groups) > 1 and sum(len(g) for g in groups) == 20
    assert all(4 + 6 + sum(9 for _ in g) <= 60 for g in groups)
    long = long_form(section)
    assert long.keys == ["key", "measure"] and len(long.rows) == 20


def test_long_sections_are_previewed_unless_all() -> None:
    data = {"rows": [{"name": f"n{i}", "value": i} for i in range(30)]}

    def printed(**options: object) -> str:
        buffer = io.StringIO()
        print_metrics(Console(file=buffer, width=100), data, None, **options)  # type: ignore[arg-type]
        return buffer.getvalue()

    assert "18 more rows: --section rows or --all" in printed()
    assert "n29" in printed(everything=True) and "more rows" not in printed(everything=True)
    assert "n29" in printed(only="rows")


def test_rows_too_wide_for_any_table_are_printed_as_records() -> None:
    rows = [
        {"measure": m, "cell": f"scenario=child_welfare, state={s}", "published": 0.7, "where": w}
        for m in ("FCC", "Borda margin")
        for s, w in (("A", "Results table " * 4), ("B", "Results text " * 4))
    ]
    section = Section("Beside the study", ["measure", "cell"], ["published", "where"], rows)
    buffer = io.StringIO()
    render(Console(file=buffer, width=60), section)
    printed = buffer.getvalue()
    assert "┃" not in printed  # no table
    assert "  cell=…welfare, state=A\n    FCC: published 0.7; where Results table" in printed
    assert "cell: every value starts with 'scenario=child_' (shown as …)" in printed
