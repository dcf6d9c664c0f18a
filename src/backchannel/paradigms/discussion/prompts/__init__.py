"""Prompt templates of the discussion paradigm (package data)."""
