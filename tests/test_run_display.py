"""A run shows itself in a notebook as a short HTML summary, read from its store alone."""

from __future__ import annotations

from pathlib import Path

import backchannel as bc
from backchannel._run_display import run_summary_html

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_a_run_displays_its_paradigm_counts_and_design(tmp_path: Path) -> None:
    run = bc.run(EXAMPLES / "peer_pressure.yaml", tmp_path / "run", model="sim", limit=3)
    page = run._repr_html_()
    assert "backchannel run peer-pressure" in page and "peer_pressure" in page
    assert "3 done, 0 incomplete, 0 failed" in page
    assert "not complete" not in page  # --limit 3 planned three
    assert "factor k</th><td" in page and "0, 1, 3" in page
    assert "run.metrics().frames()" in page


def test_a_name_with_markup_is_shown_as_text_and_a_partial_run_says_so(tmp_path: Path) -> None:
    from backchannel._run_display import _summary

    state = {"done": 1, "failed": 1, "complete": False}
    page = _summary(tmp_path, {"name": "<script>x</script>", "factors": ["k"]}, state)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "(levels not recorded)" in page
    assert "1 done, 0 incomplete, 1 failed (not complete: run it again to resume)" in page


def test_a_folder_that_is_no_run_says_so_in_one_line(tmp_path: Path) -> None:
    page = run_summary_html(tmp_path / "nothing")
    assert page.startswith("<p>") and "cannot be read" in page and "not a run directory" in page
