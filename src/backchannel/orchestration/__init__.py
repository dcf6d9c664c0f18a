"""Orchestration: one run from an experiment file to a stored, reported run, stage by stage.

1. plan (`_plan`): expand the design into conversations and estimate their calls;
2. checks (`_checks`): refuse what cannot work before anything is written;
3. run directory (`_directory`): create it, or reopen it to resume the same experiment;
4. execute (`_execute`, `_clients`, `_ray`): run the remaining conversations on asyncio or on a
   Ray cluster, committing each to the run store as it finishes;
5. shared calls (`_sharing`): what paired arms make once and answer from the cache;
   precision stopping (`_stopping`, `_until`): under `--until`, the execute stage runs the
   design's replicates in batches and stops once the headline contrasts are precise enough;
6. metrics and report (`_metrics`, `_report`): a stored run's results and HTML report.

`_api` is the Python front door over these stages (`bc.run`, `bc.open_run`, `Run` with its
tables and metrics); the command line calls the same functions. Names are imported on first use.
"""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.orchestration._api import (
        Run,
        analysis_options,
        arun,
        load_experiment,
        open_run,
        run,
    )
    from backchannel.orchestration._checks import (
        INSTALL_HINT,
        acheck_reachable,
        check_cache,
        check_executor,
        check_models,
        check_reachable,
        import_ray,
        small_model_warning,
    )
    from backchannel.orchestration._clients import (
        experiment_client,
        make_client,
        max_active_conversations,
    )
    from backchannel.orchestration._directory import (
        fingerprint,
        open_run_directory,
        record_plan,
    )
    from backchannel.orchestration._execute import (
        ProgressCallback,
        RunOutcome,
        Watcher,
        execute,
        run_plan,
    )
    from backchannel.orchestration._metrics import compute_metrics
    from backchannel.orchestration._plan import Plan, plan, spread
    from backchannel.orchestration._ray import execute_on_ray
    from backchannel.orchestration._report import run_models, write_report
    from backchannel.orchestration._sharing import pair_groups, predict_shared
    from backchannel.orchestration._stopping import (
        Look,
        Reading,
        Target,
        describe_looks,
        parse_target,
        stop_reason,
    )
    from backchannel.orchestration._until import (
        ContrastReader,
        Stopping,
        check_resume,
        contrast_reader,
        declared_contrasts,
        requested_target,
        resolve_stopping,
        run_until,
        stopping_for,
        stopping_record,
    )

__all__ = [
    "INSTALL_HINT",
    "ContrastReader",
    "Look",
    "Plan",
    "ProgressCallback",
    "Reading",
    "Run",
    "RunOutcome",
    "Stopping",
    "Target",
    "Watcher",
    "acheck_reachable",
    "analysis_options",
    "arun",
    "check_cache",
    "check_executor",
    "check_models",
    "check_reachable",
    "check_resume",
    "compute_metrics",
    "contrast_reader",
    "declared_contrasts",
    "describe_looks",
    "execute",
    "execute_on_ray",
    "experiment_client",
    "fingerprint",
    "import_ray",
    "load_experiment",
    "make_client",
    "max_active_conversations",
    "open_run",
    "open_run_directory",
    "pair_groups",
    "parse_target",
    "plan",
    "predict_shared",
    "record_plan",
    "requested_target",
    "resolve_stopping",
    "run",
    "run_models",
    "run_plan",
    "run_until",
    "small_model_warning",
    "spread",
    "stop_reason",
    "stopping_for",
    "stopping_record",
    "write_report",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._api": (
                "Run",
                "analysis_options",
                "arun",
                "load_experiment",
                "open_run",
                "run",
            ),
            "._metrics": ("compute_metrics",),
            "._checks": (
                "INSTALL_HINT",
                "acheck_reachable",
                "check_cache",
                "check_executor",
                "check_models",
                "check_reachable",
                "import_ray",
                "small_model_warning",
            ),
            "._clients": ("experiment_client", "make_client", "max_active_conversations"),
            "._directory": ("fingerprint", "open_run_directory", "record_plan"),
            "._execute": ("ProgressCallback", "RunOutcome", "Watcher", "execute", "run_plan"),
            "._plan": ("Plan", "plan", "spread"),
            "._ray": ("execute_on_ray",),
            "._report": ("run_models", "write_report"),
            "._sharing": ("pair_groups", "predict_shared"),
            "._stopping": (
                "Look",
                "Reading",
                "Target",
                "describe_looks",
                "parse_target",
                "stop_reason",
            ),
            "._until": (
                "ContrastReader",
                "Stopping",
                "check_resume",
                "contrast_reader",
                "declared_contrasts",
                "requested_target",
                "resolve_stopping",
                "run_until",
                "stopping_for",
                "stopping_record",
            ),
        },
    )
