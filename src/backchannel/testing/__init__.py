"""Test and benchmark helpers: a fake OpenAI-compatible server with a capacity model and faults,
the checks every paradigm must pass (`check_paradigm`), and where Debian's Chromium is."""

from backchannel.testing._chromium import CHROMIUM, CHROMIUM_ARGS
from backchannel.testing._fake_openai import (
    REASONING_SHAPES,
    FakeOpenAIServer,
    Reasoner,
    ReasoningShape,
    Responder,
    default_content,
    default_reasoning,
    error_body,
)
from backchannel.testing._faults import (
    BodyFault,
    DelayFault,
    DisconnectFault,
    StatusFault,
    TrickleFault,
    mixed_script,
)
from backchannel.testing._paradigm_check import check_paradigm
from backchannel.testing._schema import UnsupportedSchemaError, minimal_instance

__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "REASONING_SHAPES",
    "BodyFault",
    "DelayFault",
    "DisconnectFault",
    "FakeOpenAIServer",
    "Reasoner",
    "ReasoningShape",
    "Responder",
    "StatusFault",
    "TrickleFault",
    "UnsupportedSchemaError",
    "check_paradigm",
    "default_content",
    "default_reasoning",
    "error_body",
    "minimal_instance",
    "mixed_script",
]
