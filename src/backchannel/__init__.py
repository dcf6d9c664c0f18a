"""backchannel: multi-agent LLM experiments that record public talk and private belief."""

__version__ = "0.1.0"
