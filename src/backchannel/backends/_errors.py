"""Exceptions raised by raw backends; the wrappers decide what each one means for a run."""

from __future__ import annotations


class TransientBackendError(Exception):
    """Worth retrying: rate limit, server error, timeout, dropped connection."""

    def __init__(self, message: str, *, retry_after: float | None = None, connection: bool = False):
        super().__init__(message)
        self.retry_after = retry_after
        self.connection = connection


class RequestRejected(Exception):
    """The server refused this one request (bad request, too long): recorded, not retried."""


class FatalBackendError(Exception):
    """No request to this endpoint can succeed (wrong key, unknown model): the run stops."""
