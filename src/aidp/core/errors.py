"""Domain errors and the exit codes they map to at the CLI boundary.

Core code raises these; only `aidp.cli` turns them into a one-line message on stderr.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1  # a domain failure: not found, ambiguous, a check that failed
    USAGE = 2  # bad usage or invalid input
    TIMEOUT = 124
    INTERRUPTED = 130


class AidpError(Exception):
    """Base of every expected error; carries its exit code."""

    exit_code: ExitCode = ExitCode.FAILURE


class InvalidInput(AidpError):
    """A value given by the user is not acceptable; the message names what is."""

    exit_code = ExitCode.USAGE


class ConfigError(InvalidInput):
    """A config file or the trust store cannot be read or parsed (exit 2; nothing run)."""


class TaskNotFound(AidpError):
    def __init__(self, ref: str, why: str = "") -> None:
        super().__init__(f"Task not found: {ref}" + (f" ({why})" if why else ""))
        self.ref = ref


class AmbiguousId(AidpError):
    def __init__(self, ref: str, candidates: list[str]) -> None:
        shown = ", ".join(candidates[:10])
        more = f" (and {len(candidates) - 10} more)" if len(candidates) > 10 else ""
        super().__init__(
            f"Ambiguous task id {ref!r} matches {len(candidates)} tasks: {shown}{more}"
        )
        self.ref = ref
        self.candidates = candidates


class InvalidPosition(InvalidInput):
    pass


class StorageError(AidpError):
    """The tasklist could not be read or written (permissions, full disk, …)."""
