"""Where the database is and how to reach it, with errors a user can act on."""

from __future__ import annotations

import logging
import re
import socket
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from agent.config import Settings
from agent.errors import DatabaseError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Target:
    url: str  # the owner: migrations, psql, owner-only functions (Layer 0 approval)
    embedded: bool
    app_url: str  # the daemon's processes, the chat client, memory commands


def redact(url: str) -> str:
    """A URL fit for a log line: the password replaced by ***."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)


def postgres_url(url: str, name: str) -> str:
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    url = url.replace("postgresql+psycopg://", "postgresql://", 1)
    if not url.startswith("postgresql://"):
        raise DatabaseError(
            f"{name}={redact(url)} is not a postgresql:// URL; "
            "use postgresql://user:password@host:5432/dbname"
        )
    return url


def resolve(settings: Settings, *, start: bool = True) -> Target:
    """DATABASE_URL when set; otherwise the embedded server (started if needed).

    `app_url` logs in as the app role: on the embedded server cogd_app by peer
    authentication; with DATABASE_URL, COGD_APP_DATABASE_URL when set, else DATABASE_URL
    itself (the processes then SET ROLE [database] app_role, which RESET ROLE undoes)."""
    if settings.database_url:
        url = postgres_url(settings.database_url, "DATABASE_URL")
        app = settings.app_database_url
        return Target(url=url, embedded=False,
                      app_url=postgres_url(app, "COGD_APP_DATABASE_URL") if app else url)
    from agent.db.embedded import ensure_server, server_running

    if not start and server_running(settings.data_dir) is None:
        raise DatabaseError(
            f"the embedded Postgres in {settings.data_dir} is not running; "
            "start it with `cogd up` (or any cogd command that needs it)"
        )
    server = ensure_server(settings.data_dir,
                           shared_buffers=settings.database.embedded_shared_buffers)
    return Target(url=server.uri, embedded=True, app_url=server.app_uri)


def sqlalchemy_url(url: str) -> str:
    return "postgresql+psycopg://" + url[len("postgresql://") :]


def application_name(settings: Settings, process: str) -> str:
    # pg_stat_activity shows e.g. "cogd-loop@host"
    return f"{settings.database.application_name_prefix}-{process}@{socket.gethostname()}"[:63]


def app_role(settings: Settings) -> str | None:
    """The least-privilege role the daemon's processes act as ([database] app_role)."""
    return settings.database.app_role or None


_ROLE_WARNED: set[str] = set()


def set_role(conn: psycopg.Connection[Any], role: str) -> None:
    """SET ROLE for the session; where the role is missing or not ours to take, say so
    once and go on as the connecting user (a managed Postgres may lack the roles)."""
    try:
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        if not conn.autocommit:
            conn.commit()  # SET ROLE in a rolled-back transaction would be undone
    except (psycopg.errors.InvalidParameterValue, psycopg.errors.InsufficientPrivilege) as exc:
        if not conn.autocommit:
            conn.rollback()
        if role not in _ROLE_WARNED:
            _ROLE_WARNED.add(role)
            logger.warning(
                "cannot act as role %s (%s); running with the connecting user's privileges. "
                "Run `cogd migrate` as a user who may create roles, or set "
                "[database] app_role = \"\"", role, " ".join(str(exc).split()))


def connect(
    url: str,
    *,
    app: str = "cogd",
    autocommit: bool = False,
    timeout_s: float = 5.0,
    role: str | None = None,
    **kwargs: Any,
) -> psycopg.Connection[Any]:
    """A psycopg connection, or DatabaseError saying what is wrong and how to fix it.

    `role`: SET ROLE to it after connecting (least privilege for the workers)."""
    try:
        conn = psycopg.connect(
            url,
            autocommit=autocommit,
            application_name=app,
            connect_timeout=max(1, int(timeout_s)),
            **kwargs,
        )
        if role:
            set_role(conn, role)
        return conn
    except psycopg.OperationalError as exc:
        reason = " ".join(str(exc).split()).rstrip(".?") or exc.__class__.__name__
        if "role \"cogd_" in reason and "does not exist" in reason:
            raise DatabaseError(
                f"cannot connect to {redact(url)}: {reason}. The roles are made by the "
                "first migration: run `cogd migrate` (or `cogd up`)") from None
        raise DatabaseError(
            f"cannot connect to {redact(url)}: {reason}. Check DATABASE_URL (or unset it to "
            "use the embedded server) and that the server is running"
        ) from None
    except psycopg.ProgrammingError as exc:  # malformed conninfo
        raise DatabaseError(f"invalid DATABASE_URL {redact(url)}: {exc}") from None


def pgvector_version(conn: psycopg.Connection[Any]) -> str | None:
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return None if row is None else str(row[0])


def preflight(url: str, *, app: str = "cogd") -> str:
    """Check the server is reachable and offers pgvector; return the pgvector version
    installed or available."""
    with connect(url, app=app, autocommit=True) as conn:
        installed = pgvector_version(conn)
        if installed:
            return installed
        row = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
        if row is None:
            raise DatabaseError(
                f"the Postgres at {redact(url)} has no pgvector extension. Install pgvector "
                "on that server (or use the pgvector/pgvector image), or unset DATABASE_URL "
                "to use cogd's embedded Postgres, which ships it"
            )
        return str(row[0])
