"""A process's side work borrows from one pool (agent/db/pool.py): named connections,
as the app role, opened on demand, and a connection a restart broke is replaced."""

from __future__ import annotations

import time
from typing import Any

from agent.config import Settings
from agent.db import pool as pool_module
from agent.db.pool import MAX_SIDE_CONNECTIONS, side_pool
from agent.workers.loop import LoopWorker
from tests.conftest import make_session


def side_backends(conn: Any, process: str) -> list[int]:
    return [r[0] for r in conn.execute(
        "SELECT pid FROM pg_stat_activity WHERE application_name LIKE %s",
        (f"cogd-{process}-side@%",)).fetchall()]


def backends_after_close(conn: Any, process: str, wait: float = 10.0) -> list[int]:
    """A closed client's backend leaves pg_stat_activity when its process exits, a
    moment after the close returns: wait for it, up to `wait` seconds."""
    deadline = time.monotonic() + wait
    while (left := side_backends(conn, process)) and time.monotonic() < deadline:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        time.sleep(0.05)
    return left


def test_the_pool_lends_named_app_role_connections_and_replaces_a_broken_one(
        settings: Settings, db_url: str, conn: Any) -> None:
    pool = side_pool(settings, db_url, "loop")
    try:
        assert side_backends(conn, "loop") == []  # nothing opened while idle
        with pool.connection() as c:
            assert c.execute("SELECT current_user").fetchone() == ("cogd_app",)
            first = c.info.backend_pid
        assert side_backends(conn, "loop") == [first]
        # e.g. a restart (waiting for the backend to exit, up to 5 s: its socket is closed)
        assert conn.execute("SELECT pg_terminate_backend(%s, 5000)", (first,)).fetchone()[0]
        with pool.connection() as c:  # checked before it is lent: a new one
            assert c.execute("SELECT 1").fetchone() == (1,)
            assert c.info.backend_pid != first
    finally:
        pool.close()
    assert backends_after_close(conn, "loop") == []


def test_a_connection_given_back_moments_ago_is_lent_without_a_round_trip(
        settings: Settings, db_url: str, conn: Any, monkeypatch: Any) -> None:
    """The check before lending asks the server only for a connection opened or given back
    more than RECHECK_AFTER_S ago, or one whose socket has something to read (the server
    ended it)."""
    asked: list[int] = []
    real_check = pool_module.ConnectionPool.check_connection

    def counted(c: Any) -> None:
        asked.append(c.info.backend_pid)
        real_check(c)

    monkeypatch.setattr(pool_module.ConnectionPool, "check_connection", staticmethod(counted))
    pool = side_pool(settings, db_url, "recent")
    try:
        with pool.connection() as c:  # just opened: not asked
            pid = c.info.backend_pid
        with pool.connection() as c:  # given back moments ago, nothing to read
            assert c.info.backend_pid == pid
        assert asked == []
        monkeypatch.setattr(pool_module, "RECHECK_AFTER_S", 0.0)  # idle "too long"
        with pool.connection() as c:
            assert c.info.backend_pid == pid
        assert asked == [pid]
        monkeypatch.setattr(pool_module, "RECHECK_AFTER_S", 30.0)
        asked.clear()
        # ended by the server: its socket is readable, so it is asked, fails, and is replaced
        assert conn.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,)).fetchone()[0]
        with pool.connection() as c:
            assert c.execute("SELECT 1").fetchone() == (1,)
            assert c.info.backend_pid != pid
        assert asked[0] == pid
    finally:
        pool.close()


def test_a_streamed_turn_uses_the_pool_not_a_connection_per_reply(
        settings: Settings, db_url: str, conn: Any) -> None:
    settings.llm.roles["system1"] = settings.llm.roles["system2"] = "heuristic"
    worker = LoopWorker(settings, db_url)
    worker.conn = worker._connect()
    worker.setup()
    try:
        sid = make_session(conn)
        for i in range(3):
            conn.execute("INSERT INTO inbox (session_id, content, stream) VALUES (%s, %s, true)",
                         (sid, f"Tell me about the garden, part {i}."))
            assert worker.process_one() is True
        assert conn.execute("SELECT count(*) FROM outbox").fetchone() == (3,)
        assert len(side_backends(conn, "loop")) <= MAX_SIDE_CONNECTIONS
        others = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name ~ "
            "'^cogd-loop-(stream|lease|llm)'").fetchone()
        assert others == (0,)
    finally:
        worker.teardown()
        worker.close_pool()
        worker.conn.close()


def test_a_heartbeat_outlives_an_info_that_raises_and_marks_its_row_stopped(
        settings: Settings, db_url: str, conn: Any) -> None:
    """A process half set up (its info() raising) keeps beating; close() marks the row
    stopped even when an outage lost its registration."""
    from agent.heartbeat import Beater

    proc = settings.process.model_copy(update={"heartbeat_interval_s": 0.1})
    pool = side_pool(settings, db_url, "beat-test")
    calls = {"n": 0}

    def info() -> dict[str, Any]:
        calls["n"] += 1
        raise AttributeError("last_report")  # set only at the end of setup()

    beater = Beater(pool.connection, "beat-test", proc, info).open(state="starting")
    try:
        first = conn.execute("SELECT last_beat FROM process_heartbeats WHERE name = "
                             "'beat-test'").fetchone()[0]
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and calls["n"] < 3:
            time.sleep(0.05)
        row = conn.execute("SELECT last_beat, info FROM process_heartbeats WHERE name = "
                           "'beat-test'").fetchone()
        assert calls["n"] >= 3 and row[0] > first  # still beating
        assert "AttributeError" in row[1]["info_error"]
        beater._registered = False  # as after an outage
    finally:
        beater.close()
        pool.close()
    assert conn.execute("SELECT state, count(*) FROM process_heartbeats WHERE name = "
                        "'beat-test' GROUP BY state").fetchall() == [("stopped", 1)]
