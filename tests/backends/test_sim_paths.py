"""`sim/package.module:function` names a scripted answer by its import path, so a process that
registered nothing (the `backchannel` command) finds it; a bad path is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import WriteExperiment, discussion_experiment, invoke

import backchannel as bc

ANSWERS = '''
def answer(request):
    """Every call answers with the agent's last instruction's length."""
    return f"length {len(request.messages[-1].content)}"
'''


def test_a_function_named_by_its_import_path_answers_every_call(
    write_experiment: WriteExperiment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_answers.py").write_text(ANSWERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    path = write_experiment(discussion_experiment(factors={"model": ["sim/my_answers:answer"]}))
    ran = invoke("run", path, "-o", tmp_path / "run")
    assert ran.exit_code == 0, ran.stderr
    events = bc.open_run(tmp_path / "run").tables.events
    answers = events[events["model"] == "sim/my_answers:answer"]
    # 2 questions x (2 agents x 2 rounds + 2 agents x 3 checkpoints) calls, every one answered
    assert len(answers) == 20 and answers["text"].str.match(r"^length \d+$").all()


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("sim/no_such_module:answer", "cannot import 'answer' from 'no_such_module'"),
        ("sim/json:no_such_function", "cannot import 'no_such_function' from 'json'"),
        ("sim/json:__doc__", "sim/json:__doc__ is not callable; give `sim/package.module:func"),
        ("sim/never-registered", "register_sim (in this process only), or name `sim/package"),
    ],
)
def test_a_bad_path_is_one_clear_error_and_nothing_is_written(
    model: str, message: str, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    path = write_experiment(discussion_experiment(factors={"model": [model]}))
    ran = invoke("run", path, "-o", tmp_path / "run")
    assert ran.exit_code == 2
    assert message in ran.stderr.replace("\n", " ")
    assert "Traceback" not in ran.stderr
    assert not (tmp_path / "run").exists()
