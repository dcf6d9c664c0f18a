"""Render whole reports of simulated runs in headless Chromium and look at every figure."""

from __future__ import annotations

import subprocess
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
import yaml

import backchannel as bc
from backchannel.testing import CHROMIUM, CHROMIUM_ARGS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _shoot(page: Path, tmp_path: Path, name: str, size: tuple[int, int]) -> np.ndarray:
    assert CHROMIUM is not None
    shot = tmp_path / f"{name}.png"
    command = [
        CHROMIUM,
        *CHROMIUM_ARGS,
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={shot}",
        f"--window-size={size[0]},{size[1]}",
        page.resolve().as_uri(),
    ]
    subprocess.run(command, check=True, capture_output=True, timeout=90)
    return np.asarray(matplotlib.image.imread(shot))[..., :3]


def _figure_pages(report: Path, directory: Path) -> list[Path]:
    """One page per figure of the report, holding just that image as the report embeds it."""
    html = report.read_text()
    pages = []
    for index, chunk in enumerate(html.split("<figure>")[1:]):
        figure = chunk.split("</figure>")[0]
        page = directory / f"figure{index}.html"
        page.write_text(f"<html><body style='margin:0'><figure>{figure}</figure></body></html>")
        pages.append(page)
    return pages


def _looks_like_a_figure(pixels: np.ndarray) -> None:
    rgb = pixels.reshape(-1, 3)
    assert rgb.std() > 0.05  # not one flat colour
    assert (rgb.mean(axis=1) < 0.4).mean() > 0.002  # axis lines and text
    coloured = (rgb.max(axis=1) - rgb.min(axis=1)) > 0.3
    assert coloured.mean() > 0.001  # palette colours: bars, lines or bands


@pytest.mark.browser
@pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary on PATH (apt-get install chromium)"
)
@pytest.mark.parametrize("example", ["quickstart.yaml", "council_housing.yaml", "dyad.yaml"])
def test_every_figure_of_a_simulated_report_renders(tmp_path: Path, example: str) -> None:
    data = yaml.safe_load((EXAMPLES / example).read_text())
    if example == "quickstart.yaml":  # the quickstart is sized for the embedded model
        data["settings"]["datasets"][0]["limit"] = 12
        data["settings"]["rounds"] = 3
    if example == "dyad.yaml":
        data["settings"]["rounds"] = 4
        data["replicates"] = 2
    if example == "council_housing.yaml":
        data["replicates"] = 3
        data.pop("replicates_by")
    path = tmp_path / example
    path.write_text(yaml.safe_dump(data))
    run = bc.run(path, tmp_path / "run", model="sim/population", limit=48)
    report = run.report(tmp_path / "report")
    page = _shoot(report, tmp_path, "page", (1200, 1600))
    assert page.shape[:2] == (1600, 1200)
    _looks_like_a_figure(page)
    # The banner at the top, before any finding, says the run was simulated.
    html = report.read_text()
    assert "Simulated run" in html and html.index("Simulated run") < html.index("<figure>")
    pages = _figure_pages(report, tmp_path)
    assert pages
    for index, figure_page in enumerate(pages):
        _looks_like_a_figure(_shoot(figure_page, tmp_path, f"figure{index}", (1300, 1000)))
