"""Providers from outside the package: one registered in this process and one installed as a
distribution's entry point serve a run's models; a broken or duplicate one is one clear error."""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import WriteExperiment, discussion_experiment, invoke

import backchannel as bc
from backchannel.backends import (
    ProviderRoute,
    RawCompletion,
    Request,
    RouteContext,
    check_model,
    in_flight_bound,
    provider_names,
    register_provider,
    resolve_routes,
    split_model,
    unregister_provider,
)
from backchannel.errors import ConfigError


class Parrot:
    """A backend that answers every request with its last message, prefixed by its voice."""

    def __init__(self, voice: str) -> None:
        self.voice = voice
        self.calls = 0

    @property
    def endpoint(self) -> str:
        return f"parrot/{self.voice}"

    async def generate(self, request: Request) -> RawCompletion:
        self.calls += 1
        return RawCompletion(text=f"{self.voice}: {request.messages[-1].content[:40]}")

    async def aclose(self) -> None:
        return None


class ParrotProvider:
    """`parrot/<voice>`; at most two calls in flight per voice."""

    def route(self, name: str, context: RouteContext) -> ProviderRoute:
        if not name.isalpha():
            raise ConfigError(f"parrot/{name}: a voice is letters only; e.g. parrot/polly")
        return ProviderRoute((name,), functools.partial(Parrot, name), limit=2, bound=2)


@pytest.fixture
def parrot() -> Iterator[None]:
    register_provider("parrot", ParrotProvider)
    yield
    unregister_provider("parrot")


def test_a_registered_provider_serves_a_run(
    parrot: None, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    assert "parrot" in provider_names()
    assert split_model("parrot/polly") == ("parrot", "polly")
    path = write_experiment(discussion_experiment(factors={"model": ["parrot/polly"]}))
    run = bc.run(path, tmp_path / "run")
    assert run.counts == {"done": 2, "incomplete": 0, "failed": 0}
    answered = run.events[run.events["model"] == "parrot/polly"]
    assert len(answered) > 0
    assert answered["text"].str.startswith("polly: ").all()


def test_a_provider_route_is_keyed_by_its_provider_and_bounds_its_calls(parrot: None) -> None:
    routes = resolve_routes(["parrot/polly", "parrot/kea", "sim"])
    assert routes["parrot/polly"].key == ("parrot", "polly")
    assert routes["sim"].key == ("sim", "")
    assert in_flight_bound(routes) == 2 + 2  # each voice its own backend and bound
    assert in_flight_bound(resolve_routes(["sim"])) is None


def test_a_provider_refuses_a_model_with_its_own_message(parrot: None) -> None:
    with pytest.raises(ConfigError, match="a voice is letters only"):
        resolve_routes(["parrot/r2d2"])


def test_a_provider_cannot_take_a_built_in_name() -> None:
    with pytest.raises(ConfigError, match="provider 'sim' is already declared \\(built in\\)"):
        register_provider("sim", ParrotProvider)
    with pytest.raises(ConfigError, match="no route"):
        register_provider("nothing", object())


def test_an_unknown_provider_lists_the_known_ones(parrot: None) -> None:
    with pytest.raises(ConfigError) as raised:
        check_model("crow/x")
    assert "provider one of local, openai, parrot, sim" in str(raised.value)


# An installed distribution declaring providers under the entry-point group ---------------------


def install(root: Path, dist: str, entry_points: str, code: str = "") -> None:
    """A distribution on `root` (the way pip lays one out): its metadata and its module."""
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[backchannel.providers]\n" + textwrap.dedent(entry_points)
    )
    if code:
        (root / f"{dist}.py").write_text(textwrap.dedent(code))


PROVIDER_MODULE = """
    import functools

    from backchannel.backends import ProviderRoute, RawCompletion


    class Shout:
        endpoint = "shout"

        async def generate(self, request):
            return RawCompletion(text=request.messages[-1].content[:30].upper())

        async def aclose(self):
            return None


    class ShoutProvider:
        def route(self, name, context):
            return ProviderRoute((name,), Shout)
"""


def test_an_installed_providers_entry_point_serves_a_run(
    monkeypatch: pytest.MonkeyPatch, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    install(
        tmp_path / "site",
        "shout_provider",
        "shout = shout_provider:ShoutProvider\n",
        PROVIDER_MODULE,
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert "shout" in provider_names()
    path = write_experiment(discussion_experiment(factors={"model": ["shout/loud"]}))
    result = invoke("run", path, "-o", tmp_path / "run")
    assert result.exit_code == 0, result.output
    events = bc.open_run(tmp_path / "run").events
    answered = events[events["model"] == "shout/loud"]
    assert len(answered) > 0 and (answered["text"] == answered["text"].str.upper()).all()


def test_a_broken_entry_point_is_one_line_naming_its_package(
    monkeypatch: pytest.MonkeyPatch, write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    install(
        tmp_path / "site",
        "broken_provider",
        "crow = broken_provider:CrowProvider\n",
        "raise RuntimeError('half-installed')\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    path = write_experiment(discussion_experiment(factors={"model": ["crow/x"]}))
    result = invoke("run", path, "-o", tmp_path / "run")
    assert result.exit_code != 0
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in result.output
    assert "provider 'crow' (entry point of broken_provider: broken_provider:CrowProvider)" in (
        message
    )
    assert "cannot import 'broken_provider' (RuntimeError: half-installed)" in message
    assert not (tmp_path / "run").exists()


def test_a_provider_declared_twice_is_refused_naming_both(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    install(tmp_path / "site", "crow_one", "crow = crow_one:Provider\n")
    install(tmp_path / "site", "crow_two", "crow = crow_two:Provider\n")
    install(tmp_path / "site", "sim_again", "sim = sim_again:Provider\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ConfigError) as raised:
        resolve_routes(["crow/x"])
    message = str(raised.value)
    assert message.startswith("provider 'crow' is declared twice: ")
    assert "crow_one:Provider (entry point of crow_one)" in message
    assert "crow_two:Provider (entry point of crow_two)" in message
    assert "uninstall one of the packages or rename its entry point" in message
    with pytest.raises(ConfigError, match=r"provider 'sim' is declared twice: .*built in"):
        resolve_routes(["sim"])


def test_the_providers_guide_example_serves_a_run(
    write_experiment: WriteExperiment, tmp_path: Path
) -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "providers.md").read_text()
    code = guide.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/providers.md", "exec"), namespace)
    register_provider("parrot", namespace["ParrotProvider"])  # type: ignore[arg-type]
    try:
        path = write_experiment(discussion_experiment(factors={"model": ["parrot/kea"]}))
        run = bc.run(path, tmp_path / "run")
    finally:
        unregister_provider("parrot")
    assert run.counts["done"] == 2
    assert run.events.loc[run.events["model"] == "parrot/kea", "text"].str.startswith("kea: ").all()
