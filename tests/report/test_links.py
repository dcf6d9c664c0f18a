"""Report numbers link to the viewer's list of their conversations; wide tables split into
parts that repeat their keys; long texts wrap at most three lines."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from backchannel.analysis import Headline, HeadlineValue
from backchannel.report import Report, ViewerLinks, bar_with_intervals, viewer_links

LINKS = ViewerLinks(("model", "k"), "http://127.0.0.1:8765/")


def test_a_cell_becomes_the_viewers_url_filters() -> None:
    url = LINKS.url({"model": "sim/a#b", "k": np.int64(1), "other": "x"})
    assert url == "http://127.0.0.1:8765/#/run/0?f.model=%22sim%2Fa%23b%22&f.k=1"
    # 2.0 read back from a table is the level 2; a missing level is JSON null.
    assert LINKS.url({"k": 2.0}).endswith("?f.k=2")
    assert LINKS.url({"k": math.nan}).endswith("?f.k=null")
    assert LINKS.url({}) == "http://127.0.0.1:8765/#/run/0"
    assert LINKS.row_url(["pairing", "n"], ["main", 3]) is None  # no factor: not known


def test_a_derived_column_stands_for_its_levels_and_an_unknown_value_has_no_link() -> None:
    links = LINKS.with_derived("pair", {"a vs b": {"model": "a", "k": 1}, "all": {}})
    assert links.row_url(["pair", "n"], ["a vs b", 4]) == LINKS.url({"model": "a", "k": 1})
    assert links.row_url(["pair"], ["all"]) == LINKS.url({})
    assert links.row_url(["pair"], ["c vs d"]) is None


def test_a_static_copy_is_reached_relative_to_the_report(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    links = viewer_links(["k"], str(tmp_path / "site"), tmp_path / "run" / "report")
    assert links.base == "../../site/index.html"
    assert viewer_links(["k"], "http://h:1/", tmp_path).base == "http://h:1/"
    assert viewer_links(["k"], None, tmp_path).base == "http://127.0.0.1:8765/"


def test_rows_headline_values_and_bars_link_to_their_cells(tmp_path: Path) -> None:
    report = Report("Links")
    report.link_to_viewer(LINKS)
    frame = pd.DataFrame(
        {"model": ["a", "b"], "k": [1, 1], "fpi": [0.2, 0.4], "lo": [0.1, 0.3], "hi": [0.3, 0.5]}
    )
    report.table("cells", frame)
    report.figure(bar_with_intervals(frame, "model", "fpi", "lo", "hi", title="t", ylabel="y"), "c")
    rows = [
        HeadlineValue(
            cell={"model": m, "k": k}, measure="FPI", estimate=0.5, low=0.4, high=0.6, n=3
        )
        for m in ("a", "b")
        for k in (0, 1)
    ]
    report.headline(Headline(title="h", rows=rows, index=["model"], columns=["k"]))
    # A row keyed by something the viewer cannot filter by (and that varies) gets no link.
    odd = [HeadlineValue(cell={"pairing": p}, measure="x", estimate=1.0, n=1) for p in ("p", "q")]
    report.table("plain", pd.DataFrame({"pairing": ["p"], "n": [1]}))
    html = report.write(tmp_path / "out").read_text()
    first_row = LINKS.url({"model": "a", "k": 1}).replace("&", "&amp;")
    assert f'<td><a class="conversations" href="{first_row}">a</a></td>' in html
    assert html.count('class="conversations"') == 2 + 4  # two rows, four headline values
    # The bars link (SVG `xlink:href`) to the same cells; the downloaded SVG has no links.
    bars = re.findall(r'xlink:href="([^"]+)"', html)
    assert first_row in bars and LINKS.url({"model": "b", "k": 1}).replace("&", "&amp;") in bars
    downloaded = (tmp_path / "out" / "figure-1.svg").read_text()
    assert "127.0.0.1" not in downloaded and "backchannel-row" not in downloaded
    assert pd.read_csv(tmp_path / "out" / "figure-1.csv")["model"].tolist() == ["a", "b"]
    second = Report("Odd")
    second.link_to_viewer(LINKS)
    second.headline(Headline(title="h", rows=odd, index=["pairing"], columns=[]))
    assert 'class="conversations"' not in second.to_html()


def test_a_headline_written_first_links_by_a_column_derived_later() -> None:
    # The headline opens the report, before a paradigm's sections say that `pairing` stands
    # for factor levels (dyad): its links are made when the page is written.
    report = Report("Pairings")
    report.link_to_viewer(LINKS)
    rows = [
        HeadlineValue(cell={"pairing": p}, measure="shift", estimate=0.5, n=2)
        for p in ("a vs b", "b vs a")
    ]
    report.headline(Headline(title="h", rows=rows, index=["pairing"], columns=[]))
    report.derive_levels("pairing", {"a vs b": {"model": "a", "k": 0}, "b vs a": {"model": "b"}})
    html = report.to_html()
    assert html.count('class="conversations"') == 2
    assert LINKS.url({"model": "a", "k": 0}).replace("&", "&amp;") in html
    assert LINKS.url({"model": "b"}) in html


def test_a_wide_table_is_split_into_parts_that_repeat_its_keys() -> None:
    report = Report("Wide")
    report.link_to_viewer(LINKS)
    columns = {f"measure_number_{i}_long_name": [0.5, 0.25] for i in range(14)}
    report.table("wide", pd.DataFrame({"model": ["a", "b"], "k": [0, 1], **columns}))
    html = report.to_html()
    parts = re.findall(r"<table>.*?</table>", html)
    assert len(parts) >= 2 and "(part 1 of" in parts[0]
    assert all("<th>model</th><th class=num>k</th>" in part for part in parts)
    shown = sum(part.count("measure_<wbr>number_") for part in parts)
    assert shown == 14  # every column once, across the parts


def test_a_long_text_wraps_at_most_three_lines_and_keeps_the_whole_text() -> None:
    report = Report("Long")
    reason = "no exposed honest turns with a probe after them, in this cell of the design"
    report.table("long", pd.DataFrame({"model": ["a"], "skipped": [reason]}))
    html = report.to_html()
    assert f'<td class="long"><div title="{reason}">{reason}</div></td>' in html
    assert "-webkit-line-clamp: 3" in html
