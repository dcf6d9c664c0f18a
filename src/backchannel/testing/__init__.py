"""Test and benchmark helpers: a fake OpenAI-compatible server with a capacity model and faults."""

from backchannel.testing._fake_openai import (
    FakeOpenAIServer,
    Responder,
    default_content,
    error_body,
)
from backchannel.testing._faults import DelayFault, DisconnectFault, StatusFault
from backchannel.testing._schema import UnsupportedSchemaError, minimal_instance

__all__ = [
    "DelayFault",
    "DisconnectFault",
    "FakeOpenAIServer",
    "Responder",
    "StatusFault",
    "UnsupportedSchemaError",
    "default_content",
    "error_body",
    "minimal_instance",
]
