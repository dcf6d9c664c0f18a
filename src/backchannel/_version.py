"""The package version, in one place: the front door, the run manifest, reports and
pyproject.toml all read it from here."""

__version__ = "0.1.0"
