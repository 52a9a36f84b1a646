"""Real Postgres for every test that needs one.

One embedded PostgreSQL 18 + pgvector server per test session (or the server named
by COGD_TEST_DATABASE_URL), a template database migrated once, and a fresh
`CREATE DATABASE t_<uuid> TEMPLATE ...` per test, dropped afterwards.
"""

from __future__ import annotations

import os
import random
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")

# Bytecode. The tests start `cogd` in subprocesses hundreds of times, each importing
# lancedb, sklearn (hdbscan), alembic and pydantic. The venv is installed --no-compile
# (README command 1), and where PYTHONDONTWRITEBYTECODE is set (container images often
# set it) no process writes a .pyc either, so every subprocess compiled those sources
# again: 28 s of an 85 s `cogd night-cycle` (cProfile, `builtins.compile`). The test
# session and what it starts keep Python's bytecode cache, written once per module as
# without the variable; the code that runs is the same.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    import sys

    sys.dont_write_bytecode = False

from agent.config import Settings, load_settings  # noqa: E402

# the skip policy's hooks (CI fails on a skip that is not allow-listed): tests/skip_policy.py
from tests.skip_policy import (  # noqa: E402, F401
    pytest_collectreport,
    pytest_configure,
    pytest_runtest_logreport,
    pytest_sessionfinish,
    pytest_terminal_summary,
)

REPO = Path(__file__).resolve().parents[1]


def _with_db(url: str, dbname: str) -> str:
    head, sep, query = url.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{dbname}{sep}{query}"


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    """A maintenance-database URL on a real Postgres with pgvector."""
    external = os.environ.get("COGD_TEST_DATABASE_URL")
    if external:
        yield external
        return
    import shutil
    import tempfile

    from agent.db.embedded import ensure_server, stop_server

    # not under pytest's base temp: a second pytest session on this machine makes
    # /tmp/pytest-of-<user> 0700 again when it starts, and as root the server's OS user
    # (pgserver) could no longer reach its own files
    data_dir = Path(tempfile.mkdtemp(prefix="cogd-test-")) / "data"
    server = ensure_server(data_dir)
    yield server.admin_uri
    stop_server(data_dir)
    shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.fixture(scope="session")
def test_settings_base(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return load_settings(data_dir=tmp_path_factory.mktemp("cogd-settings"))


@pytest.fixture(scope="session")
def template_db(pg_admin_url: str, test_settings_base: Settings) -> str:
    """Name of a database migrated to head once per session."""
    from agent.db import migrate as mig

    name = f"cogd_tpl_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = _with_db(pg_admin_url, name)
    mig.upgrade(url, test_settings_base)
    return name


def create_db(pg_admin_url: str, template: str | None = None) -> tuple[str, str]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    tpl = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{tpl}')
    return name, _with_db(pg_admin_url, name)


def drop_db(pg_admin_url: str, name: str) -> None:
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def db_url(pg_admin_url: str, template_db: str) -> Iterator[str]:
    """A migrated database of its own for this test."""
    name, url = create_db(pg_admin_url, template_db)
    yield url
    drop_db(pg_admin_url, name)


@pytest.fixture
def empty_db_url(pg_admin_url: str) -> Iterator[str]:
    """An empty database (no schema) for migration tests."""
    name, url = create_db(pg_admin_url)
    yield url
    drop_db(pg_admin_url, name)


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data", database_url=db_url)


@pytest.fixture
def conn(db_url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(db_url, autocommit=True) as c:
        yield c


def make_session(conn: psycopg.Connection[Any], handle: str = "alice") -> Any:
    """A user and a session; returns the session_id."""
    user = conn.execute(
        "INSERT INTO users (handle) VALUES (%s) ON CONFLICT (handle) DO UPDATE "
        "SET handle = EXCLUDED.handle RETURNING user_id",
        (handle,),
    ).fetchone()
    assert user is not None
    row = conn.execute(
        "INSERT INTO sessions (user_id) VALUES (%s) RETURNING session_id", (user[0],)
    ).fetchone()
    assert row is not None
    return row[0]


def allow_login(server: Any, role: str) -> None:
    """Let this OS user log in as `role` on an embedded server (which maps it to cogd's
    roles only, by peer authentication): the line a user would add to pg_ident.conf."""
    import pwd
    import time

    me = pwd.getpwuid(os.geteuid()).pw_name
    ident = server.pgdata / "pg_ident.conf"
    ident.write_text(ident.read_text() + f"cogd {me} {role}\n")
    with psycopg.connect(server.admin_uri, autocommit=True) as su:
        su.execute("SELECT pg_reload_conf()")
    url = _with_db(server.admin_uri, "postgres").replace("postgres:@", f"{role}@", 1)
    for _ in range(100):  # the postmaster reloads on SIGHUP, a moment later
        try:
            psycopg.connect(url).close()
            return
        except psycopg.OperationalError as exc:
            if "Peer authentication failed" not in str(exc):
                return
            time.sleep(0.05)
    raise AssertionError(f"{role} still may not log in after the reload")


def cogd_env(**extra: str) -> dict[str, str]:
    """Environment for running the real `cogd` CLI in a subprocess."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("COGD_")}
    env.pop("DATABASE_URL", None)
    env.update(extra)
    return env


def wait_for(predicate: Callable[[], Any], seconds: float, every: float = 0.1) -> Any:
    """`predicate()`'s first truthy value within `seconds` (polled every `every`), else
    None: for a process or server a test started."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    return None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for a server a test starts)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class NoFloor(random.Random):
    """A draw that never falls under a stochastic floor (`random()` is always 0.999):
    what a test sees is the rules' outcome, not chance's."""

    def random(self) -> float:
        return 0.999


def heuristic_roles(settings: Settings) -> Settings:
    """`settings` with system1, system2 and consolidation on the heuristic fallback (no
    model); returns the same object."""
    for role in ("system1", "system2", "consolidation"):
        settings.llm.roles[role] = "heuristic"
    return settings


def user_of(conn: psycopg.Connection[Any], session_id: Any) -> Any:
    """The user_id of session `session_id`."""
    row = conn.execute("SELECT user_id FROM sessions WHERE session_id = %s",
                       (session_id,)).fetchone()
    assert row is not None, f"no session {session_id}"
    return row[0]
