"""OpenAI-compatible servers through the official async `openai` SDK.

One `AsyncOpenAI` client (and connection pool) per endpoint, kept for the whole run. The SDK's own
retries are off: retrying is the retry wrapper's concern.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import openai

from backchannel.backends._constraints import gbnf_grammar, json_schema_for
from backchannel.backends._errors import (
    FatalBackendError,
    RequestRejected,
    TransientBackendError,
)
from backchannel.backends._types import JsonSchema, RawCompletion, Request

ConstrainedDecoding = Literal["json_schema", "grammar", "none"]


def _retry_after(error: openai.APIStatusError) -> float | None:
    header = error.response.headers.get("retry-after") if error.response is not None else None
    if header is None:
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        return None


class OpenAIBackend:
    """Chat completions against `base_url`; `model_name` is the part after `openai/`."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout_s: float = 120.0,
        constrained: ConstrainedDecoding = "json_schema",
    ) -> None:
        self._base_url = base_url
        self._constrained = constrained
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            max_retries=0,
            timeout=timeout_s,
        )

    @property
    def endpoint(self) -> str:
        return str(self._client.base_url)

    def _extra(self, request: Request) -> dict[str, Any]:
        constraint = request.constraint
        if constraint is None or self._constrained == "none":
            return {}
        if self._constrained == "grammar":
            grammar = gbnf_grammar(constraint)
            if grammar is not None:
                return {"extra_body": {"grammar": grammar}}
        schema = json_schema_for(constraint)
        if schema is not None and isinstance(constraint, JsonSchema):
            return {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": constraint.name, "schema": schema},
                }
            }
        return {}

    async def generate(self, request: Request) -> RawCompletion:
        model_name = request.model.split("/", 1)[1]
        started = time.perf_counter()
        try:
            response = await self._client.chat.completions.create(
                model=model_name,
                messages=[m.as_dict() for m in request.messages],  # type: ignore[misc]
                temperature=request.settings.temperature,
                top_p=request.settings.top_p,
                max_tokens=request.settings.max_tokens,
                seed=request.seed,
                **self._extra(request),
            )
        except openai.RateLimitError as error:
            raise TransientBackendError(
                f"rate limited (429) by {self.endpoint}", retry_after=_retry_after(error)
            ) from error
        except (openai.AuthenticationError, openai.PermissionDeniedError) as error:
            raise FatalBackendError(
                f"{self.endpoint} refused the API key ({error.status_code}); set the right key in "
                "the experiment file's endpoint `api_key_env` variable or OPENAI_API_KEY"
            ) from error
        except openai.NotFoundError as error:
            raise FatalBackendError(
                f"{self.endpoint} does not serve model {model_name!r} (404); check the model name "
                "and the endpoint's base_url"
            ) from error
        except openai.BadRequestError as error:
            raise RequestRejected(
                f"{self.endpoint} rejected the request: {error.message}"
            ) from error
        except openai.APIStatusError as error:
            if error.status_code >= 500 or error.status_code in (408, 409):
                raise TransientBackendError(
                    f"server error {error.status_code} from {self.endpoint}",
                    retry_after=_retry_after(error),
                ) from error
            raise RequestRejected(
                f"{self.endpoint} answered {error.status_code}: {error.message}"
            ) from error
        except openai.APITimeoutError as error:
            raise TransientBackendError(f"timed out waiting for {self.endpoint}") from error
        except openai.APIConnectionError as error:
            raise TransientBackendError(
                f"cannot connect to {self.endpoint}", connection=True
            ) from error
        latency = time.perf_counter() - started
        if not response.choices:
            raise TransientBackendError(f"{self.endpoint} returned no choices")
        choice = response.choices[0]
        usage = response.usage
        return RawCompletion(
            text=choice.message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            latency_s=latency,
            finish_reason=choice.finish_reason or "stop",
        )

    async def aclose(self) -> None:
        await self._client.close()
