"""audit_log's hash chain (revision 0009): tampering shows, even by the owner."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import psycopg

from agent.config import load_settings
from agent.db import migrate as mig
from agent.db.audit import verify_chain as verify_audit_chain
from tests.acceptance.test_cli import COGD
from tests.conftest import cogd_env


def log(conn: Any, action: str, details: dict[str, Any] | None = None) -> None:
    conn.execute("INSERT INTO audit_log (actor, action, target, details) "
                 "VALUES ('test', %s, 't', %s::jsonb)", (action, json.dumps(details or {})))


def as_owner_bypassing_the_guard(conn: Any, sql: str, *args: Any) -> None:
    """What an owner can do: switch the append-only trigger off, change a row, switch it
    back on."""
    conn.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete")
    conn.execute(sql, args)
    conn.execute("ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update_delete")


def test_an_intact_chain_verifies_and_concurrent_writers_keep_it(db_url: str,
                                                                  conn: Any) -> None:
    for i in range(5):
        log(conn, "first", {"i": i})

    def writer(n: int) -> None:
        with psycopg.connect(db_url, autocommit=True) as c:
            for i in range(20):
                log(c, f"writer-{n}", {"i": i})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result = verify_audit_chain(conn)
    assert result["ok"] and result["rows"] >= 65 and len(result["head"]) == 64


def test_a_changed_a_removed_and_an_inserted_row_break_the_chain(conn: Any) -> None:
    for i in range(6):
        log(conn, "event", {"i": i})
    ids = [r[0] for r in conn.execute("SELECT id FROM audit_log ORDER BY id")]
    assert verify_audit_chain(conn)["ok"]
    as_owner_bypassing_the_guard(
        conn, "UPDATE audit_log SET details = '{\"i\": 99}' WHERE id = %s", ids[2])
    broken = verify_audit_chain(conn)
    assert not broken["ok"] and broken["broken_at"] == ids[2]
    assert "changed" in broken["reason"]
    as_owner_bypassing_the_guard(conn, "DELETE FROM audit_log WHERE id <= %s", ids[2])
    assert verify_audit_chain(conn)["broken_at"] == ids[3]  # its predecessor is gone


def test_a_row_slipped_in_between_breaks_the_chain(conn: Any) -> None:
    for i in range(4):
        log(conn, "event", {"i": i})
    ids = [r[0] for r in conn.execute("SELECT id FROM audit_log ORDER BY id")]
    gap = next(i for i in range(ids[1] + 1, ids[2]))  # ids are drawn twice: gaps exist
    before = conn.execute("SELECT row_hash FROM audit_log WHERE id = %s",
                          (ids[1],)).fetchone()[0]
    conn.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_chain")
    conn.execute("INSERT INTO audit_log (id, actor, action, prev_hash, row_hash) "
                 "VALUES (%s, 'forger', 'approve', %s, 'f00d')", (gap, before))
    conn.execute("ALTER TABLE audit_log ENABLE TRIGGER audit_log_chain")
    broken = verify_audit_chain(conn)
    assert not broken["ok"] and broken["broken_at"] == gap


def test_rows_from_before_0009_are_chained_by_the_revision(empty_db_url: str,
                                                           tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path, database_url=empty_db_url)
    mig.upgrade(empty_db_url, settings, "0008_exactly_once")
    with psycopg.connect(empty_db_url, autocommit=True) as c:
        for i in range(3):
            log(c, "old", {"i": i})
    mig.upgrade(empty_db_url, settings)
    with psycopg.connect(empty_db_url, autocommit=True) as c:
        assert c.execute("SELECT count(*) FROM audit_log WHERE row_hash IS NULL"
                         ).fetchone() == (0,)
        log(c, "new")
        assert verify_audit_chain(c) == {"ok": True, "rows": 4, "head": c.execute(
            "SELECT row_hash FROM audit_log ORDER BY id DESC LIMIT 1").fetchone()[0],
            "broken_at": None, "reason": None}


def test_cogd_audit_verify_exits_1_on_tampering(db_url: str, conn: Any,
                                                tmp_path: Path) -> None:
    import subprocess

    env = cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"))
    log(conn, "one")
    log(conn, "two")
    ok = subprocess.run([COGD, "audit", "verify"], env=env, capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0 and "audit_log intact: 2 rows" in ok.stdout, ok.stderr
    as_owner_bypassing_the_guard(conn, "UPDATE audit_log SET actor = 'someone else' "
                                       "WHERE action = 'one'")
    bad = subprocess.run([COGD, "audit", "verify", "--json"], env=env, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 1, bad.stderr
    assert json.loads(bad.stdout)["ok"] is False
