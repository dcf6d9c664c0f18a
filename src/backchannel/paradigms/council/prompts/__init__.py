"""Prompt templates of the council paradigm (package data)."""
