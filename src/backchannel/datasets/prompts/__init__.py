"""The screening prompt (package data)."""
