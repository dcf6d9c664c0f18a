"""Render a written report in headless Chromium and check the screenshot is not blank."""

import subprocess
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from backchannel.report import Report, bar_with_intervals
from backchannel.testing import CHROMIUM, CHROMIUM_ARGS


@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary on PATH (apt-get install chromium)"
)
def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    frame = pd.DataFrame(
        {"model": ["a", "b"], "flip_rate": [0.2, 0.4], "low": [0.1, 0.3], "high": [0.3, 0.5]}
    )
    report = Report("Browser check", "headless render")
    report.section("Results", "Bars with intervals.")
    report.table("flips", frame)
    report.figure(
        bar_with_intervals(frame, "model", "flip_rate", "low", "high", title="t", ylabel="r"),
        "Flip rate per model",
    )
    page = report.write(tmp_path / "out")
    screenshot = tmp_path / "shot.png"
    command = [
        CHROMIUM,
        *CHROMIUM_ARGS,
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={screenshot}",
        "--window-size=1200,2000",
        page.resolve().as_uri(),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    assert screenshot.exists()
    pixels = np.asarray(matplotlib.image.imread(screenshot))
    assert pixels.shape[:2] == (2000, 1200)
    # A blank page is one flat colour; the rendered report has text, table rules and bars.
    rgb = pixels[..., :3].reshape(-1, 3)
    assert rgb.std() > 0.05
    dark = (rgb.mean(axis=1) < 0.5).mean()
    assert dark > 0.001  # some dark ink (text) is on the page
    blue = ((rgb[:, 2] > 0.6) & (rgb[:, 0] < 0.2)).mean()
    assert blue > 0.001  # the first palette colour (#0072B2) of the bars made it to screen
