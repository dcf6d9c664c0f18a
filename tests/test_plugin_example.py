"""The out-of-tree paradigm in examples/plugin: installed like any package, found through its
entry point, and run through every command from a directory outside the project."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[1] / "examples" / "plugin"
BACKCHANNEL = str(Path(sys.executable).with_name("backchannel"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin installed into its own folder (not into the test environment)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", target, PLUGIN],
        check=True,
        capture_output=True,
    )
    return target


def command(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [BACKCHANNEL, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_the_plugin_runs_through_every_command(site: Path, tmp_path: Path) -> None:
    shutil.copy(PLUGIN / "experiment.yaml", tmp_path / "experiment.yaml")
    ran = command(site, tmp_path, "run", "experiment.yaml", "-o", "run", "--model", "sim")
    assert ran.returncode == 0, ran.stderr
    status = command(site, tmp_path, "status", "run")
    assert status.returncode == 0, status.stderr
    assert "4 done" in status.stdout
    metrics = command(site, tmp_path, "metrics", "run", "--json")
    assert metrics.returncode == 0, metrics.stderr
    figures = json.loads(metrics.stdout)
    assert figures["conversations"] == 4
    # 3 + 4 agents, 2 statements, 3 checkpoints: every ballot is read (sim answers the label set).
    assert sum(row["n"] for row in figures["yes_share_by_checkpoint"]) == (3 + 4) * 2 * 3
    assert figures["unreadable_votes"] == 0
    # The experiment file's factor `agents: [3, 4]` gives its own rows: 2 statements each.
    assert [(row["agents"], row["conversations"]) for row in figures["by_cell"]] == [(3, 2), (4, 2)]
    assert {row["agents"] for row in figures["yes_share_by_checkpoint"]} == {3, 4}
    report = command(site, tmp_path, "report", "run")
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "run" / "report" / "report.html").is_file()
    export = command(site, tmp_path, "export", "run", "--format", "csv", "-o", "tables")
    assert export.returncode == 0, export.stderr
    again = command(site, tmp_path, "metrics", "--tables", "tables", "--json")
    assert json.loads(again.stdout) == figures
    # The paradigm declares a judge task for public turns: 2 rounds x (3 + 4) agents x 2 items.
    refused = command(site, tmp_path, "judge", "run", "--judge", "rule", "--as", "r")
    assert refused.returncode == 2 and "no rule for stance" in refused.stderr
    for name, extra in (("a", ()), ("b", ("--sample", "10"))):
        judged = command(site, tmp_path, "judge", "run", "--judge", "sim", "--as", name, *extra)
        assert judged.returncode == 0, judged.stderr
    assert "labelled 28 events" in command(site, tmp_path, "judge", "run", "--judge", "sim",
                                           "--as", "a").stdout  # fmt: skip
    agreed = command(site, tmp_path, "agree", "run", "a", "b", "--json")
    assert agreed.returncode == 0, agreed.stderr
    stance = json.loads(agreed.stdout)["stance"]
    # the same sim answers the same seeded judge requests alike
    assert stance["n"] == 10 and stance["percent_agreement"] == 1.0


@pytest.mark.slow
def test_a_class_path_names_a_paradigm_without_an_entry_point(site: Path, tmp_path: Path) -> None:
    text = (PLUGIN / "experiment.yaml").read_text()
    path = tmp_path / "experiment.yaml"
    path.write_text(text.replace("paradigm: poll ", "paradigm: backchannel_poll:Poll "))
    ran = command(site, tmp_path, "run", "experiment.yaml", "-o", "run", "--model", "sim")
    assert ran.returncode == 0, ran.stderr
    assert command(site, tmp_path, "export", "run", "-o", "t").returncode == 0
    assert json.loads((tmp_path / "t" / "manifest.json").read_text())["paradigm"] == (
        "backchannel_poll:Poll"
    )


@pytest.fixture
def poll_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin importable in this process (by its class path), as if installed."""
    monkeypatch.syspath_prepend(str(PLUGIN))


def test_the_plugins_population_answer_is_recovered_by_its_metrics(
    poll_on_path: None, tmp_path: Path
) -> None:
    import yaml
    from statsmodels.stats.proportion import proportion_confint

    import backchannel as bc

    lean, switch, rounds = 0.7, 0.15, 2
    experiment = yaml.safe_load((PLUGIN / "experiment.yaml").read_text())
    experiment.update(
        paradigm="backchannel_poll:Poll",
        replicates=60,
        factors={},
        population={"poll": {"lean": lean, "switch": switch}},
    )
    experiment["settings"].update(model="sim/population", agents=3, rounds=rounds)
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    figures = bc.run(path, tmp_path / "run").metrics()
    assert figures.unreadable_votes == 0
    # The planted answers, worked out by hand (see PollPopulation): yes share per checkpoint
    # and the share of agents whose last vote differs from the first.
    assert [row.checkpoint for row in figures.yes_share_by_checkpoint] == [0, 1, 2]
    for row in figures.yes_share_by_checkpoint:
        planted = 0.5 + (lean - 0.5) * (1 - 2 * switch) ** row.checkpoint
        assert row.yes_share is not None
        low, high = proportion_confint(round(row.yes_share * row.n), row.n, method="wilson")
        assert (row.low, row.high) == pytest.approx((low, high))  # its interval is statsmodels'
        assert low <= planted <= high, (row, planted)
    (cell,) = figures.by_cell  # no factors: one cell
    changed, n = cell.vote_change_rate, cell.vote_change_n
    assert changed is not None
    planted_change = (1 - (1 - 2 * switch) ** rounds) / 2
    low, high = proportion_confint(round(changed * n), n, method="wilson")
    assert low <= planted_change <= high
    # Its judge answers by the vote a turn says: the turns of the population are all readable.
    from typer.testing import CliRunner

    from backchannel.cli import app

    judged = CliRunner().invoke(
        app, ["judge", str(tmp_path / "run"), "--judge", "sim/population", "--as", "pop"]
    )
    assert judged.exit_code == 0, judged.output
    labels = bc.open_run(tmp_path / "run").tables.labels
    assert set(labels["label"]) == {"yes", "no"}


def test_the_plugins_population_section_is_checked(poll_on_path: None, tmp_path: Path) -> None:
    import yaml

    import backchannel as bc

    experiment = yaml.safe_load((PLUGIN / "experiment.yaml").read_text())
    experiment.update(paradigm="backchannel_poll:Poll", population={"poll": {"leen": 0.5}})
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    with pytest.raises(bc.ConfigError, match=r"population\.poll\.leen: unknown field"):
        bc.load_experiment(path)


def test_the_paradigm_check_passes_and_every_setting_separates(
    poll_on_path: None, tmp_path: Path
) -> None:
    import yaml

    from backchannel.testing import check_paradigm

    experiment = yaml.safe_load((PLUGIN / "experiment.yaml").read_text())
    experiment.update(paradigm="backchannel_poll:Poll", factors={})
    experiment["settings"]["model"] = "sim"
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    levels = {
        "model": ["sim", "sim#other"],
        "agents": [2, 3],
        "rounds": [1, 2],
        "temperature": [0.5, 0.7],
        "max_tokens": [32, 64],
    }
    from backchannel_poll import Poll

    assert set(levels) == set(Poll.factors())  # every setting that can be a factor
    assert check_paradigm(path, tmp_path / "check", factors=levels) == []


def test_a_factor_the_author_adds_appears_as_its_own_rows(
    poll_on_path: None, tmp_path: Path
) -> None:
    """The example file's `agents` factor, and a `rounds` factor added beside it: every row of
    the metrics carries both, one row per combination, counted by hand."""
    import yaml

    import backchannel as bc
    from backchannel.analysis import Design, separation_problems

    experiment = yaml.safe_load((PLUGIN / "experiment.yaml").read_text())
    experiment.update(paradigm="backchannel_poll:Poll")
    experiment["factors"]["rounds"] = [1, 3]
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(experiment))
    run = bc.run(path, tmp_path / "run", model="sim")
    figures = run.metrics()
    assert Design.of(run.tables).factors == ("agents", "rounds")
    assert separation_problems(figures, Design.of(run.tables)) == []
    cells = [(r.cell["agents"], r.cell["rounds"], r.conversations) for r in figures.by_cell]
    assert cells == [(3, 1, 2), (3, 3, 2), (4, 1, 2), (4, 3, 2)]  # 2 statements per cell
    shares = {(r.cell["agents"], r.cell["rounds"], r.checkpoint): r.n
              for r in figures.yes_share_by_checkpoint}  # fmt: skip
    # checkpoints 0..rounds; every ballot read: agents x 2 statements at each
    assert shares == {(a, t, c): a * 2 for a in (3, 4) for t in (1, 3) for c in range(t + 1)}
    assert all(r.vote_change_n == r.cell["agents"] * 2 for r in figures.by_cell)
    assert figures.as_json()["by_cell"][0] == {
        "agents": 3,
        "rounds": 1,
        "conversations": 2,
        "vote_change_rate": figures.by_cell[0].vote_change_rate,
        "vote_change_n": 6,
        "unreadable_votes": 0,
    }
    headline = figures.headline()
    assert headline.index == ["agents", "rounds"] and len(headline.pivot()) == 4
