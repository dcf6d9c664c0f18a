"""Prompt templates of the LLM judge (package data)."""
