"""Report: sections, tables with CSVs, embedded figures, metrics and escaping."""

import re
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from backchannel.analysis import Interval
from backchannel.report import Report

FRAME = pd.DataFrame(
    {
        "model": ["alpha", "beta", "gamma"],
        "k": [1, 3, 5],
        "flip_rate": [0.125, 0.5, 1.0],
        "effect": [0.41237, -0.2, 1.5],
        "screened": [True, False, True],
    }
)


def build_report() -> Report:
    report = Report("Peer pressure", "Run 2024-01-01")
    report.note("The embedded SmolLM2-135M model is a plumbing default, too small for findings.")
    report.section("Design", "First paragraph.\n\nSecond paragraph\nstill second.")
    report.table("flips", FRAME, caption="Flip rate per model")
    report.section("Figures")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    report.figure(fig, "A diagonal line")
    report.metrics({"conversations": 40, "flip_rate": Interval(0.25, 0.1, 0.4, 20)})
    return report


def test_sections_notes_and_paragraphs(tmp_path: Path) -> None:
    page = build_report().write(tmp_path).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>Peer pressure</title>" in page
    assert '<p class="subtitle">Run 2024-01-01</p>' in page
    assert '<section id="design"><h2>Design</h2>' in page
    assert '<section id="figures"><h2>Figures</h2>' in page
    assert '<a href="#design">Design</a>' in page  # contents list
    assert '<div class="note"><p>The embedded SmolLM2-135M' in page
    # A blank line splits paragraphs; a single newline does not.
    assert "<p>First paragraph.</p><p>Second paragraph\nstill second.</p>" in page


def test_tables_are_formatted_and_written_as_csv(tmp_path: Path) -> None:
    path = build_report().write(tmp_path)
    page = path.read_text(encoding="utf-8")
    assert "<caption>Flip rate per model</caption>" in page
    # flip_rate is a proportion column: 0.125 -> 12.5%, 1.0 -> 100.0%; effect has 3 decimals.
    for cell in ["12.5%", "50.0%", "100.0%", "0.412", "-0.200", "1.500", ">yes<", ">no<"]:
        assert cell in page
    assert '<a href="flips.csv">flips.csv</a>' in page
    csv = tmp_path / "flips.csv"
    assert csv.parent == path.parent
    pd.testing.assert_frame_equal(pd.read_csv(csv), FRAME)


def test_named_index_becomes_a_column(tmp_path: Path) -> None:
    report = Report("Index")
    report.table("by_model", FRAME.set_index("model"))
    report.write(tmp_path)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "by_model.csv"), FRAME)


def test_long_tables_are_cut_in_the_page_but_not_in_the_csv(tmp_path: Path) -> None:
    report = Report("Long", max_rows=2)
    report.table("long", pd.DataFrame({"i": range(5)}))
    page = report.write(tmp_path).read_text(encoding="utf-8")
    assert page.count("<tr><td class=num>") == 2
    assert "first 2 of 5" in page
    assert len(pd.read_csv(tmp_path / "long.csv")) == 5


def test_figure_is_inline_svg_with_svg_pdf_and_csv_beside_it_and_closed(tmp_path: Path) -> None:
    report = Report("Figure")
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.bar(["a"], [1])
    number = fig.number
    report.figure(fig, "One bar", data=pd.DataFrame({"x": ["a"], "y": [1]}))
    assert not plt.fignum_exists(number)
    page = report.write(tmp_path).read_text(encoding="utf-8")
    assert page.count("<svg") == 1 and "<?xml" not in page
    assert "One bar" in page and 'href="figure-1.pdf"' in page and 'href="figure-1.csv"' in page
    svg = (tmp_path / "figure-1.svg").read_text()
    # Drawn 10 in wide, laid out again at the text column's 7 in (504 pt).
    width = float(re.search(r'width="([\d.]+)pt"', svg).group(1))  # type: ignore[union-attr]
    assert width == pytest.approx(504)
    assert (tmp_path / "figure-1.pdf").read_bytes().startswith(b"%PDF")
    assert pd.read_csv(tmp_path / "figure-1.csv").to_dict("list") == {"x": ["a"], "y": [1]}


def test_metrics_format_intervals_and_proportions(tmp_path: Path) -> None:
    page = build_report().write(tmp_path).read_text(encoding="utf-8")
    assert "<th>conversations</th><td class=num>40</td>" in page
    # flip_rate is a proportion: 0.25 [0.1, 0.4] -> 25.0% [10.0%, 40.0%].
    assert "<th>flip_rate</th><td class=num>25.0% [10.0%, 40.0%] (n=20)</td>" in page


def test_metrics_say_why_an_interval_is_missing() -> None:
    report = Report("t")
    report.metrics(
        {
            "one": Interval(0.5, float("nan"), float("nan"), 1, skipped="one value"),
            "none": Interval(float("nan"), float("nan"), float("nan"), 0, skipped="no values"),
        }
    )
    html = report.to_html()
    assert "0.500 (no interval: one value; n=1)" in html
    assert "(no interval: no values; n=0)" in html


def test_everything_is_escaped(tmp_path: Path) -> None:
    attack = "<script>alert(1)</script>"
    report = Report(f"Title {attack}", subtitle=attack)
    report.section(f"Heading {attack}", f"Text {attack}")
    report.note(attack)
    report.table("t", pd.DataFrame({attack: [attack, "a & b"]}), caption=attack)
    report.metrics({attack: attack})
    page = report.write(tmp_path).read_text(encoding="utf-8")
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "a &amp; b" in page
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "t.csv"), pd.DataFrame({attack: [attack, "a & b"]})
    )


def test_page_is_self_contained(tmp_path: Path) -> None:
    page = build_report().write(tmp_path).read_text(encoding="utf-8")
    assert "<link" not in page
    assert "<script" not in page
    assert not re.search(r'(src|href)="(https?:)?//', page)


def test_invalid_names_are_rejected(tmp_path: Path) -> None:
    report = Report("Names")
    report.table("ok_name-1.v2", FRAME)
    with pytest.raises(ValueError, match="already"):
        report.table("ok_name-1.v2", FRAME)
    for bad in ["../escape", "with space", ""]:
        with pytest.raises(ValueError):
            report.table(bad, FRAME)
    with pytest.raises(ValueError):
        report.write(tmp_path, "sub/report.html")
    with pytest.raises(ValueError):
        Report("  ")


def test_repeated_headings_get_distinct_anchors(tmp_path: Path) -> None:
    report = Report("Anchors")
    report.section("Results")
    report.section("Results")
    page = report.write(tmp_path / "nested" / "dir").read_text(encoding="utf-8")
    assert 'id="results"' in page and 'id="results-2"' in page
