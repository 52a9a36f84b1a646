"""Errors a user can act on. The CLI prints them as one line and exits 2."""

from __future__ import annotations


class CogdError(Exception):
    """An error whose message tells the user what is wrong and how to fix it."""

    exit_code = 2


class ConfigError(CogdError):
    """Invalid or missing configuration."""


class DatabaseError(CogdError):
    """The database is unreachable, lacks pgvector, or is not cogd's."""


class DataDirError(CogdError):
    """COGD_DATA_DIR is corrupt, foreign, or unusable."""


class ProviderError(CogdError):
    """A model provider failed in a way retrying will not fix."""


class AlreadyRunning(CogdError):
    """A singleton process found its advisory lock taken (agent/db/locks.py)."""


class InputError(CogdError):
    """Input that cogd refuses (empty, invalid UTF-8, ...)."""


class NotFoundError(InputError):
    """What the caller named does not exist, or is not theirs to see (another user's id
    reads the same): HTTP 404."""
