"""Tidy tables and every statistic the paradigms report: pure functions, recomputable.

Each statistic returns a small frozen result carrying its n and, when it cannot be computed, a
`skipped` reason; docs/statistics.md lists them with their definitions and references.
"""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.analysis._agreement_stats import Kappa, cohens_kappa
    from backchannel.analysis._divergence import (
        STANCE_PAIR_COLUMNS,
        check_stance_pairs,
        classify_pairs,
        clustered_proportion_ci,
        divergence,
        divergent_turns,
    )
    from backchannel.analysis._divergence_results import (
        Divergence,
        DivergenceRow,
        DivergenceTest,
    )
    from backchannel.analysis._effects import (
        rank_biserial_independent,
        rank_biserial_independent_ci,
        rank_biserial_paired,
        rank_biserial_paired_ci,
    )
    from backchannel.analysis._headline import (
        Headline,
        HeadlineValue,
        Study,
        StudyComparison,
        StudyValue,
        compare_study,
        comparison_frame,
        load_study,
    )
    from backchannel.analysis._influence import OPINION_COLUMNS, fit_influence
    from backchannel.analysis._influence_results import Influence, InfluenceRow
    from backchannel.analysis._intervals import (
        bca_mean_ci,
        bootstrap_mean_ci,
        paired_bootstrap_diff_ci,
        t_mean_ci,
        wilson_interval,
    )
    from backchannel.analysis._json import finite_or_none, jsonable
    from backchannel.analysis._multiple import bonferroni, holm
    from backchannel.analysis._records import CellRow, IntervalRecord, Record
    from backchannel.analysis._regression import (
        Coefficient,
        OlsFit,
        WaldResult,
        ols_hc3,
        wald_test,
    )
    from backchannel.analysis._results import Interval, TestResult
    from backchannel.analysis._tables import (
        CONVERSATION_BASE_COLUMNS,
        EVENT_COLUMNS,
        LABEL_COLUMNS,
        RunTables,
        decode_json,
    )
    from backchannel.analysis._tests import (
        ZERO_TOLERANCE,
        mann_whitney_u,
        mcnemar_test,
        paired_differences,
        sign_test,
        welch_t_test,
        wilcoxon_signed_rank,
    )
    from backchannel.analysis._texts import texts_in
    from backchannel.analysis._typed import (
        Design,
        Metrics,
        cell_groups,
        rows_frame,
        separation_problems,
    )
    from backchannel.analysis._validity import (
        ORDER_CHECKS,
        ORDER_COLUMNS,
        AwarenessRow,
        OrderRow,
        Validity,
        order_check,
        poisson_binomial_pmf,
        poisson_binomial_test,
        validity,
    )

__all__ = [
    "CONVERSATION_BASE_COLUMNS",
    "EVENT_COLUMNS",
    "LABEL_COLUMNS",
    "OPINION_COLUMNS",
    "ORDER_CHECKS",
    "ORDER_COLUMNS",
    "STANCE_PAIR_COLUMNS",
    "ZERO_TOLERANCE",
    "AwarenessRow",
    "CellRow",
    "Coefficient",
    "Design",
    "Divergence",
    "DivergenceRow",
    "DivergenceTest",
    "Headline",
    "HeadlineValue",
    "Influence",
    "InfluenceRow",
    "Interval",
    "IntervalRecord",
    "Kappa",
    "Metrics",
    "OlsFit",
    "OrderRow",
    "Record",
    "RunTables",
    "Study",
    "StudyComparison",
    "StudyValue",
    "TestResult",
    "Validity",
    "WaldResult",
    "bca_mean_ci",
    "bonferroni",
    "bootstrap_mean_ci",
    "cell_groups",
    "check_stance_pairs",
    "classify_pairs",
    "clustered_proportion_ci",
    "cohens_kappa",
    "compare_study",
    "comparison_frame",
    "decode_json",
    "divergence",
    "divergent_turns",
    "finite_or_none",
    "fit_influence",
    "holm",
    "jsonable",
    "load_study",
    "mann_whitney_u",
    "mcnemar_test",
    "ols_hc3",
    "order_check",
    "paired_bootstrap_diff_ci",
    "paired_differences",
    "poisson_binomial_pmf",
    "poisson_binomial_test",
    "rank_biserial_independent",
    "rank_biserial_independent_ci",
    "rank_biserial_paired",
    "rank_biserial_paired_ci",
    "rows_frame",
    "separation_problems",
    "sign_test",
    "t_mean_ci",
    "texts_in",
    "validity",
    "wald_test",
    "welch_t_test",
    "wilcoxon_signed_rank",
    "wilson_interval",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._agreement_stats": ("Kappa", "cohens_kappa"),
            "._divergence_results": ("Divergence", "DivergenceRow", "DivergenceTest"),
            "._divergence": (
                "STANCE_PAIR_COLUMNS",
                "check_stance_pairs",
                "classify_pairs",
                "clustered_proportion_ci",
                "divergence",
                "divergent_turns",
            ),
            "._effects": (
                "rank_biserial_independent",
                "rank_biserial_independent_ci",
                "rank_biserial_paired",
                "rank_biserial_paired_ci",
            ),
            "._headline": (
                "Headline",
                "HeadlineValue",
                "Study",
                "StudyComparison",
                "StudyValue",
                "compare_study",
                "comparison_frame",
                "load_study",
            ),
            "._influence": ("OPINION_COLUMNS", "fit_influence"),
            "._influence_results": ("Influence", "InfluenceRow"),
            "._intervals": (
                "bca_mean_ci",
                "bootstrap_mean_ci",
                "paired_bootstrap_diff_ci",
                "t_mean_ci",
                "wilson_interval",
            ),
            "._json": ("finite_or_none", "jsonable"),
            "._multiple": ("bonferroni", "holm"),
            "._regression": ("Coefficient", "OlsFit", "WaldResult", "ols_hc3", "wald_test"),
            "._results": ("Interval", "TestResult"),
            "._tables": (
                "CONVERSATION_BASE_COLUMNS",
                "EVENT_COLUMNS",
                "LABEL_COLUMNS",
                "RunTables",
                "decode_json",
            ),
            "._records": ("CellRow", "IntervalRecord", "Record"),
            "._texts": ("texts_in",),
            "._typed": (
                "Design",
                "Metrics",
                "cell_groups",
                "rows_frame",
                "separation_problems",
            ),
            "._validity": (
                "ORDER_CHECKS",
                "ORDER_COLUMNS",
                "AwarenessRow",
                "OrderRow",
                "Validity",
                "order_check",
                "poisson_binomial_pmf",
                "poisson_binomial_test",
                "validity",
            ),
            "._tests": (
                "ZERO_TOLERANCE",
                "mann_whitney_u",
                "mcnemar_test",
                "paired_differences",
                "sign_test",
                "welch_t_test",
                "wilcoxon_signed_rank",
            ),
        },
    )
