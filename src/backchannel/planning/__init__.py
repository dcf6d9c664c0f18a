"""Design tools: the headline contrasts every paradigm declares (`Paradigm.contrasts`), their
estimates from a stored run, and the sample sizes a target precision or power needs.

docs/statistics.md ("Planning a run") gives each method.
"""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.planning._contrast import (
        KINDS,
        READING_FIELDS,
        Arm,
        ArmSummary,
        Contrast,
        ContrastEstimate,
        ContrastReading,
        Kind,
        Options,
        Reader,
        has_levels,
    )
    from backchannel.planning._estimate import (
        estimate_contrast,
        intra_correlation,
        read_contrast,
    )
    from backchannel.planning._units import Units, contrast_units

__all__ = [
    "KINDS",
    "READING_FIELDS",
    "Arm",
    "ArmSummary",
    "Contrast",
    "ContrastEstimate",
    "ContrastReading",
    "Kind",
    "Options",
    "Reader",
    "Units",
    "contrast_units",
    "estimate_contrast",
    "has_levels",
    "intra_correlation",
    "read_contrast",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._contrast": (
                "KINDS",
                "READING_FIELDS",
                "Arm",
                "ArmSummary",
                "Contrast",
                "ContrastEstimate",
                "ContrastReading",
                "Kind",
                "Options",
                "Reader",
                "has_levels",
            ),
            "._estimate": ("estimate_contrast", "intra_correlation", "read_contrast"),
            "._units": ("Units", "contrast_units"),
        },
    )
