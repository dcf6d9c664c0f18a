"""Model backends behind one interface, `async generate(request)`, and the wrappers around them.

Model strings are `provider/model`: `openai/<model>` (any OpenAI-compatible server),
`local/smollm2` or `local/<path.gguf>` (embedded llama.cpp), `sim` or `sim/<name>` (scripted),
`sim/population` (a simulated population with planted parameters); `#<label>` after a sim model
makes distinct simulated models (`sim#a`, `sim/population#b`). Other prefixes come from
providers registered with `register_provider` or installed under the entry-point group
`backchannel.providers` (docs/providers.md).
"""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.backends._base import Backend
    from backchannel.backends._cache import (
        ResponseCache,
        SharedCalls,
        cache_key,
        cache_totals,
        count_shared_calls,
        damaged_cache_message,
    )
    from backchannel.backends._caveat import SMALL_MODEL_WARNING, is_simulated, model_caveat
    from backchannel.backends._client import LLMClient, Route
    from backchannel.backends._constraints import ParseResult, gbnf_grammar, parse
    from backchannel.backends._errors import (
        FatalBackendError,
        RequestRejected,
        TransientBackendError,
    )
    from backchannel.backends._limit import PriorityLimiter
    from backchannel.backends._pop_hook import Population, PopulationCall
    from backchannel.backends._population import PopulationBook, PopulationParams
    from backchannel.backends._profile import ModelSettings
    from backchannel.backends._providers import (
        Provider,
        ProviderRoute,
        RouteContext,
        get_provider,
        provider_names,
        register_provider,
        unregister_provider,
    )
    from backchannel.backends._reasoning import Split, ThinkTags, split_reasoning
    from backchannel.backends._registry import (
        build_client,
        check_model,
        check_reachable,
        in_flight_bound,
        resolve_routes,
        split_model,
    )
    from backchannel.backends._replicas import current_conversation
    from backchannel.backends._retry import RetryPolicy
    from backchannel.backends._scripted import scripted_client
    from backchannel.backends._settings import EndpointSettings, LocalSettings
    from backchannel.backends._sim import register_sim, scripted_answer, unregister_sim
    from backchannel.backends._types import (
        CallInfo,
        Completion,
        GenerationSettings,
        IntRange,
        JsonSchema,
        LabelSet,
        Message,
        OutputConstraint,
        Ranking,
        RawCompletion,
        ReasoningEffort,
        Request,
        Seen,
        Status,
        check_extra_body,
    )
    from backchannel.backends._urls import redact_urls, redact_userinfo, shown_url, url_problem
    from backchannel.backends._usage import Price, Usage, UsageMeter

__all__ = [
    "SMALL_MODEL_WARNING",
    "Backend",
    "CallInfo",
    "Completion",
    "EndpointSettings",
    "FatalBackendError",
    "GenerationSettings",
    "IntRange",
    "JsonSchema",
    "LLMClient",
    "LabelSet",
    "LocalSettings",
    "Message",
    "ModelSettings",
    "OutputConstraint",
    "ParseResult",
    "Population",
    "PopulationBook",
    "PopulationCall",
    "PopulationParams",
    "Price",
    "PriorityLimiter",
    "Provider",
    "ProviderRoute",
    "Ranking",
    "RawCompletion",
    "ReasoningEffort",
    "Request",
    "RequestRejected",
    "ResponseCache",
    "RetryPolicy",
    "Route",
    "RouteContext",
    "Seen",
    "SharedCalls",
    "Split",
    "Status",
    "ThinkTags",
    "TransientBackendError",
    "Usage",
    "UsageMeter",
    "build_client",
    "cache_key",
    "cache_totals",
    "check_extra_body",
    "check_model",
    "check_reachable",
    "count_shared_calls",
    "current_conversation",
    "damaged_cache_message",
    "gbnf_grammar",
    "get_provider",
    "in_flight_bound",
    "is_simulated",
    "model_caveat",
    "parse",
    "provider_names",
    "redact_urls",
    "redact_userinfo",
    "register_provider",
    "register_sim",
    "resolve_routes",
    "scripted_answer",
    "scripted_client",
    "shown_url",
    "split_model",
    "split_reasoning",
    "unregister_provider",
    "unregister_sim",
    "url_problem",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._base": ("Backend",),
            "._cache": (
                "ResponseCache",
                "SharedCalls",
                "cache_key",
                "cache_totals",
                "count_shared_calls",
                "damaged_cache_message",
            ),
            "._caveat": ("SMALL_MODEL_WARNING", "is_simulated", "model_caveat"),
            "._client": ("LLMClient", "Route"),
            "._constraints": ("ParseResult", "gbnf_grammar", "parse"),
            "._errors": ("FatalBackendError", "RequestRejected", "TransientBackendError"),
            "._limit": ("PriorityLimiter",),
            "._pop_hook": ("Population", "PopulationCall"),
            "._population": ("PopulationBook", "PopulationParams"),
            "._profile": ("ModelSettings",),
            "._reasoning": ("Split", "ThinkTags", "split_reasoning"),
            "._providers": (
                "Provider",
                "ProviderRoute",
                "RouteContext",
                "get_provider",
                "provider_names",
                "register_provider",
                "unregister_provider",
            ),
            "._registry": (
                "build_client",
                "check_model",
                "check_reachable",
                "in_flight_bound",
                "resolve_routes",
                "split_model",
            ),
            "._replicas": ("current_conversation",),
            "._retry": ("RetryPolicy",),
            "._scripted": ("scripted_client",),
            "._settings": ("EndpointSettings", "LocalSettings"),
            "._sim": ("register_sim", "scripted_answer", "unregister_sim"),
            "._types": (
                "CallInfo",
                "Completion",
                "GenerationSettings",
                "IntRange",
                "JsonSchema",
                "LabelSet",
                "Message",
                "OutputConstraint",
                "Ranking",
                "RawCompletion",
                "ReasoningEffort",
                "Request",
                "Seen",
                "Status",
                "check_extra_body",
            ),
            "._urls": ("redact_urls", "redact_userinfo", "shown_url", "url_problem"),
            "._usage": ("Price", "Usage", "UsageMeter"),
        },
    )
