"""Errors that end a command with a clear message: each names the problem and the fix."""

from __future__ import annotations


class BackchannelError(Exception):
    """Base class: the message is shown to the user as is, so it must say what to do."""

    exit_code = 1


class ConfigError(BackchannelError):
    """The experiment file or a command-line option is wrong (exit code 2)."""

    exit_code = 2


class RunDirectoryError(BackchannelError):
    """The run directory cannot be used for this command (exit code 2)."""

    exit_code = 2


class BackendUnavailable(BackchannelError):
    """A model endpoint cannot serve any request (unreachable, wrong key, unknown model).

    Raised instead of recording failures, because no conversation could succeed.
    """

    exit_code = 1
