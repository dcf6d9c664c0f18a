"""How many conversations run at once follows what the run's endpoints can take: a few per call
in flight (each endpoint's `max_in_flight`, per replica, the local slots, `--concurrency`),
never 256 whatever the server, so on a small server conversations finish steadily."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import WriteExperiment, discussion_experiment

from backchannel import orchestration
from backchannel.backends import EndpointSettings, LocalSettings, in_flight_bound, resolve_routes
from backchannel.engine import active_conversations
from backchannel.experiment import load_experiment


@pytest.mark.parametrize(
    ("in_flight", "active"),
    [(None, 256), (1, 16), (2, 16), (4, 16), (8, 32), (64, 256), (200, 800)],
)
def test_a_few_conversations_per_call_in_flight_and_never_fewer_than_16(
    in_flight: int | None, active: int
) -> None:
    assert active_conversations(in_flight) == active


def bound(models: list[str], **options: Any) -> int | None:
    return in_flight_bound(resolve_routes(models, **options))


def test_the_bound_is_summed_over_distinct_servers() -> None:
    small = EndpointSettings(models="openai/a*", base_url="http://h:1/v1", max_in_flight=8)
    large = EndpointSettings(models="openai/b*", base_url="http://g:1/v1", max_in_flight=16)
    endpoints = [small, large]
    assert bound(["openai/a1"], endpoints=endpoints) == 8
    # two models on one endpoint share its bound; two endpoints add up
    assert bound(["openai/a1", "openai/a2"], endpoints=endpoints) == 8
    assert bound(["openai/a1", "openai/b1"], endpoints=endpoints) == 24
    # --concurrency replaces each endpoint's bound
    assert bound(["openai/a1", "openai/b1"], endpoints=endpoints, max_in_flight=2) == 4
    replicas = EndpointSettings(base_urls=("http://r{1..3}:8000/v1",), max_in_flight=8)
    assert bound(["openai/m"], endpoints=[replicas]) == 24


def test_local_slots_bound_and_simulated_models_do_not() -> None:
    assert bound(["sim"]) is None and bound(["sim/population"]) is None
    endpoint = EndpointSettings(base_url="http://h:1/v1", max_in_flight=8)
    assert bound(["sim", "openai/m"], endpoints=[endpoint]) == 8


def test_local_slots_are_the_bound_of_the_embedded_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from backchannel.backends import _local

    monkeypatch.setattr(_local, "resolve_model_path", lambda name: f"/models/{name}.gguf")
    assert bound(["local/x"], local=LocalSettings(parallel=4)) == 4
    assert bound(["local/x"], local=LocalSettings(parallel=4, max_in_flight=6)) == 6


@pytest.mark.parametrize(("max_in_flight", "active"), [(8, 32), (2, 16), (100, 400)])
def test_a_run_sizes_its_active_set_from_its_endpoints(
    max_in_flight: int, active: int, write_experiment: WriteExperiment
) -> None:
    data = discussion_experiment(
        factors={"model": ["openai/fake-model"]},
        endpoints=[{"base_url": "http://127.0.0.1:9/v1", "max_in_flight": max_in_flight}],
    )
    plan = orchestration.plan(load_experiment(write_experiment(data)))
    assert orchestration.max_active_conversations(plan, None) == active
    assert orchestration.max_active_conversations(plan, 1) == 16
    on_sim = orchestration.plan(
        load_experiment(write_experiment(discussion_experiment(), name="s.yaml"))
    )
    assert orchestration.max_active_conversations(on_sim, None) == 256
