"""Alembic, configured in code: `cogd migrate` and the test fixtures use this."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql

import migrations
from agent.config import Settings
from agent.db.connect import connect
from agent.domain.tables import need

if TYPE_CHECKING:
    from alembic.config import Config

logger = logging.getLogger(__name__)
MIGRATE_LOCK_KEY = 0x636F6764  # "cogd": one migration at a time per database


def alembic_config(url: str, settings: Settings) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(migrations.__file__).parent))
    cfg.attributes["settings"] = settings
    cfg.attributes["url"] = url
    return cfg


# a revision file's `revision: str = "..."` and `down_revision: str | None = ...` lines
_REVISION_LINE = re.compile(r'^(revision|down_revision)\s*(?::[^=]*)?=\s*(?:"([^"]*)"|None)\s*$',
                            re.MULTILINE)


def head_revision() -> str:
    """The newest revision, read from migrations/versions without importing alembic (most
    commands only check that the schema is at head, and alembic's import costs about half
    a second of every CLI call); alembic's own answer when the files do not name one head
    plainly (tests/unit/test_migrate_head.py compares the two)."""
    return _scanned_head() or alembic_head_revision()


def alembic_head_revision() -> str:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(Path(migrations.__file__).parent))
    head = script.get_current_head()
    assert head is not None
    return head


def _scanned_head() -> str | None:
    """The one revision no other revision names as its down_revision, or None when a file
    does not say both plainly (a branch, a merge, another shape)."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (Path(migrations.__file__).parent / "versions").glob("*.py"):
        found = dict((m.group(1), m.group(2)) for m in
                     _REVISION_LINE.finditer(path.read_text(encoding="utf-8")))
        if not found.get("revision") or "down_revision" not in found:
            return None
        revisions.add(str(found["revision"]))
        if found["down_revision"] is not None:
            parents.add(str(found["down_revision"]))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def current_revision(conn: psycopg.Connection[Any]) -> str | None:
    exists = conn.execute("SELECT to_regclass('public.alembic_version')").fetchone()
    if exists is None or exists[0] is None:
        return None
    row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    return None if row is None else str(row[0])


def _locked(url: str, action: Any) -> None:
    """Run `action(conn)` holding the migration lock, on the lock's own connection."""
    with connect(url, app="cogd-migrate", autocommit=True) as lock_conn:
        lock_conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATE_LOCK_KEY,))
        try:
            action(lock_conn)
        finally:
            lock_conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATE_LOCK_KEY,))


APP_PASSWORD_ENV = "COGD_APP_PASSWORD"


def upgrade(url: str, settings: Settings, revision: str = "head") -> None:
    """Migrate to `revision` (head: every revision). At head already, nothing is written:
    a command that runs as cogd_app (COGD_APP_DATABASE_URL, docker-compose's workers)
    passes; one with revisions to apply and no right to apply them is told to run
    `cogd migrate` as the owner."""
    from agent.errors import DatabaseError

    def run(conn: psycopg.Connection[Any]) -> None:
        if revision == "head" and current_revision(conn) == head_revision():
            record_boundaries(conn, settings)
            set_app_password(conn)
            return
        from alembic import command

        try:
            command.upgrade(alembic_config(url, settings), revision)
        except Exception as exc:
            # alembic's SQLAlchemy wraps the driver's error (.orig)
            denied = exc if isinstance(exc, psycopg.Error) else getattr(exc, "orig", None)
            if not isinstance(denied, psycopg.errors.InsufficientPrivilege):
                raise
            raise DatabaseError(
                f"the schema needs migrating (at {current_revision(conn) or 'nothing'}, head "
                f"{head_revision()}) and this database user may not "
                f"({denied.diag.message_primary}): run `cogd migrate` with the owner's "
                "DATABASE_URL") from None
        record_boundaries(conn, settings)
        set_app_password(conn)

    _locked(url, run)


def set_app_password(conn: psycopg.Connection[Any]) -> None:
    """$COGD_APP_PASSWORD, when set, becomes cogd_app's login password (docker-compose:
    the migrate service sets it; the workers log in with it). The embedded server needs
    none (peer authentication)."""
    import os

    password = os.environ.get(APP_PASSWORD_ENV)
    if not password:
        return
    try:
        with conn.transaction():
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'cogd_app'").fetchone():
                conn.execute(sql.SQL("ALTER ROLE cogd_app PASSWORD {}").format(
                    sql.Literal(password)))
    except psycopg.errors.InsufficientPrivilege as exc:
        logger.warning("$%s is set but cogd_app's password was not changed (%s)",
                       APP_PASSWORD_ENV, exc.diag.message_primary)


def record_boundaries(conn: psycopg.Connection[Any], settings: Settings) -> None:
    """Record the configured Layer 0 boundaries as an owner-owned SQL function (revision
    0010): the loop's bootstrap, running as cogd_app, can insert those boundaries and no
    others, and no app role can replace the function. A migrate records the config it
    runs with; when the recorded ones already match (every command after the first), or
    the user is not the owner (a DATABASE_URL that logs in as cogd_app), nothing is
    written."""
    boundaries = [str(b) for b in need(settings.identity, "bootstrap_boundaries")]
    row = conn.execute("SELECT to_regprocedure('public.cogd_layer0_bootstrap(text[])'), "
                       "to_regprocedure('public.cogd_configured_boundaries()')").fetchone()
    if row is None or row[0] is None:
        return  # a revision before 0010
    if row[1] is not None:
        recorded = conn.execute("SELECT public.cogd_configured_boundaries()").fetchone()
        if recorded is not None and list(recorded[0] or []) == boundaries:
            return
    body = sql.SQL("SELECT {}::text[]").format(sql.Literal(boundaries)).as_string(conn)
    try:
        with conn.transaction():
            conn.execute(sql.SQL(
                "CREATE OR REPLACE FUNCTION public.cogd_configured_boundaries() "
                "RETURNS text[] LANGUAGE sql IMMUTABLE AS {}").format(sql.Literal(body)))
            conn.execute("REVOKE ALL ON FUNCTION public.cogd_configured_boundaries() "
                         "FROM PUBLIC")
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'cogd_app'"
                            ).fetchone():
                conn.execute("GRANT EXECUTE ON FUNCTION "
                             "public.cogd_layer0_bootstrap(text[]) TO cogd_app")
    except psycopg.errors.InsufficientPrivilege as exc:
        logger.warning("the configured identity boundaries were not recorded (%s); "
                       "run `cogd migrate` as the schema owner after changing them",
                       exc.diag.message_primary)


def downgrade(url: str, settings: Settings, revision: str = "base") -> None:
    from alembic import command

    _locked(url, lambda _conn: command.downgrade(alembic_config(url, settings), revision))
