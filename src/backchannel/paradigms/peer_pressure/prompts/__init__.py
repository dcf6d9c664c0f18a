"""Prompt templates of the peer-pressure paradigm (package data)."""
