"""Design tools: the headline contrasts every paradigm declares (`Paradigm.contrasts`), their
estimates from a stored run, and the sample sizes a target precision or power needs.

docs/statistics.md ("Planning a run") gives each method.
"""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.planning._assume import (
        AssumptionError,
        parse_stated,
        pilot_assumption,
        stated_assumption,
    )
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
    from backchannel.planning._plan import (
        PlanRow,
        Target,
        arm_cells,
        plan_row,
        stratum_shares,
    )
    from backchannel.planning._simulate import Simulated, simulate
    from backchannel.planning._size import (
        Assumption,
        paired_sd,
        predicted_halfwidth,
        predicted_power,
        proportion_sd,
        units_for_halfwidth,
        units_for_power,
    )
    from backchannel.planning._units import Units, contrast_units

__all__ = [
    "KINDS",
    "READING_FIELDS",
    "Arm",
    "ArmSummary",
    "Assumption",
    "AssumptionError",
    "Contrast",
    "ContrastEstimate",
    "ContrastReading",
    "Kind",
    "Options",
    "PlanRow",
    "Reader",
    "Simulated",
    "Target",
    "Units",
    "arm_cells",
    "contrast_units",
    "estimate_contrast",
    "has_levels",
    "intra_correlation",
    "paired_sd",
    "parse_stated",
    "pilot_assumption",
    "plan_row",
    "predicted_halfwidth",
    "predicted_power",
    "proportion_sd",
    "read_contrast",
    "simulate",
    "stated_assumption",
    "stratum_shares",
    "units_for_halfwidth",
    "units_for_power",
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
            "._assume": (
                "AssumptionError",
                "parse_stated",
                "pilot_assumption",
                "stated_assumption",
            ),
            "._estimate": ("estimate_contrast", "intra_correlation", "read_contrast"),
            "._plan": ("PlanRow", "Target", "arm_cells", "plan_row", "stratum_shares"),
            "._simulate": ("Simulated", "simulate"),
            "._size": (
                "Assumption",
                "paired_sd",
                "predicted_halfwidth",
                "predicted_power",
                "proportion_sd",
                "units_for_halfwidth",
                "units_for_power",
            ),
            "._units": ("Units", "contrast_units"),
        },
    )
