"""The shared "Validity" report section: the awareness and order tables (also as CSV), or a
note saying why a check has no rows."""

from __future__ import annotations

from pathlib import Path

from backchannel.analysis import Validity
from backchannel.report import Report, validity_section


def _validity() -> Validity:
    return Validity.model_validate(
        {
            "awareness": [
                {
                    "k": 1,
                    "role": "honest",
                    "n_asked": 4,
                    "n_judged": 3,
                    "n_aware": 2,
                    "rate": 2 / 3,
                    "low": 0.2,
                    "high": 0.94,
                    "failures": {"probe: refusal": 1},
                }
            ],
            "order": [],
            "order_skipped": "the paradigm declares no option or speaker order",
        }
    )


def test_the_section_shows_the_rows_and_says_why_a_check_has_none(tmp_path: Path) -> None:
    report = Report("run")
    validity_section(report, _validity())
    page = report.write(tmp_path).read_text(encoding="utf-8")
    assert "Validity" in page and "Experiment awareness per cell and role" in page
    assert "probe: refusal: 1" in page
    assert "Order effects: the paradigm declares no option or speaker order." in page
    written = (tmp_path / "validity_awareness.csv").read_text(encoding="utf-8")
    assert written.splitlines()[0].startswith("k,role,n_asked,n_judged,n_aware,rate")
    assert not (tmp_path / "validity_order.csv").exists()
