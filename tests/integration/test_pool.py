"""A process's side work borrows from one pool (agent/db/pool.py): named connections,
as the app role, opened on demand, and a connection a restart broke is replaced."""

from __future__ import annotations

from typing import Any

from agent.config import Settings
from agent.db.pool import MAX_SIDE_CONNECTIONS, side_pool
from agent.workers.loop import LoopWorker
from tests.conftest import make_session


def side_backends(conn: Any, process: str) -> list[int]:
    return [r[0] for r in conn.execute(
        "SELECT pid FROM pg_stat_activity WHERE application_name LIKE %s",
        (f"cogd-{process}-side@%",)).fetchall()]


def test_the_pool_lends_named_app_role_connections_and_replaces_a_broken_one(
        settings: Settings, db_url: str, conn: Any) -> None:
    pool = side_pool(settings, db_url, "loop")
    try:
        assert side_backends(conn, "loop") == []  # nothing opened while idle
        with pool.connection() as c:
            assert c.execute("SELECT current_user").fetchone() == ("cogd_app",)
            first = c.info.backend_pid
        assert side_backends(conn, "loop") == [first]
        conn.execute("SELECT pg_terminate_backend(%s)", (first,))  # e.g. a restart
        with pool.connection() as c:  # checked before it is lent: a new one
            assert c.execute("SELECT 1").fetchone() == (1,)
            assert c.info.backend_pid != first
    finally:
        pool.close()
    assert side_backends(conn, "loop") == []


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
