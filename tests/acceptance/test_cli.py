"""The real `cogd` CLI in a subprocess, against real Postgres servers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.db.embedded import psql_path
from tests.conftest import cogd_env, user_of
from tests.stubserver import StubServer, stub_server_fixture  # noqa: F401

COGD = str(Path(sys.executable).with_name("cogd"))


def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Any:
    return subprocess.run(
        [COGD, *args], env=env or cogd_env(), capture_output=True, text=True, timeout=timeout
    )


def assert_clean_error(proc: Any, *fragments: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def embedded_dir(tmp_path: Path) -> Any:
    data = tmp_path / "cogd-home"
    yield data
    run("--data-dir", str(data), "down")


def test_migrate_status_db_url_psql_on_embedded_defaults(embedded_dir: Path) -> None:
    env = cogd_env(COGD_DATA_DIR=str(embedded_dir))
    migrated = run("migrate", "--json", env=env)
    assert migrated.returncode == 0, migrated.stderr
    status = run("status", "--json", env=env)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["revision"] == data["head_revision"] == "0030_session_turn_index"
    assert data["pgvector"] == "0.8.5"
    assert data["database"]["embedded"] is True
    assert data["rows"]["day_table"] == 0
    assert "reranker" in data

    url = run("db-url", env=env).stdout.strip()
    psql = shutil.which("psql") or str(psql_path())
    views = subprocess.run(
        [psql, url, "-c", "select * from v_processes"], capture_output=True, text=True,
        timeout=60,
    )
    assert views.returncode == 0, views.stderr
    assert "seconds_since_beat" in views.stdout
    rejected = subprocess.run(
        [psql, url, "-v", "ON_ERROR_STOP=1", "-c",
         "INSERT INTO audit_log (actor, action) VALUES ('op', 'test')",
         "-c", "UPDATE audit_log SET actor = 'x'"],
        capture_output=True, text=True, timeout=60,
    )
    assert rejected.returncode != 0
    assert "append-only" in rejected.stderr

    # the server outlives the commands; `cogd down` stops it
    assert (embedded_dir / "pg" / "postmaster.pid").exists()
    down = run("down", env=env)
    assert down.returncode == 0 and "stopped" in down.stdout
    assert not (embedded_dir / "pg" / "postmaster.pid").exists()


def test_database_url_that_points_nowhere(tmp_path: Path) -> None:
    env = cogd_env(DATABASE_URL="postgresql://nobody@127.0.0.1:1/nothing",
                   COGD_DATA_DIR=str(tmp_path))
    for command in (["migrate"], ["up"], ["status"]):
        proc = run(*command, env=env)
        assert_clean_error(proc, "cannot connect to postgresql://nobody@127.0.0.1:1/nothing")


def test_database_url_that_is_not_postgres(tmp_path: Path) -> None:
    env = cogd_env(DATABASE_URL="mysql://root@localhost/x", COGD_DATA_DIR=str(tmp_path))
    assert_clean_error(run("migrate", env=env), "is not a postgresql:// URL")


def test_password_never_printed(tmp_path: Path) -> None:
    env = cogd_env(DATABASE_URL="postgresql://u:s3cret@127.0.0.1:1/x",
                   COGD_DATA_DIR=str(tmp_path))
    proc = run("migrate", env=env)
    assert proc.returncode == 2
    assert "s3cret" not in proc.stderr + proc.stdout
    assert "u:***@" in proc.stderr


def test_foreign_data_dir_is_refused_untouched(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    proc = run("--data-dir", str(tmp_path), "migrate")
    assert_clean_error(proc, "is not a cogd data directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_unknown_worker_name(db_url: str) -> None:
    proc = run("up", "--workers", "loop,dreamer", env=cogd_env(DATABASE_URL=db_url))
    assert proc.returncode == 2
    assert "dreamer" in proc.stderr


def _wait(predicate: Any, seconds: float = 60.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return None


def _alive(conn: Any) -> dict[str, int]:
    rows = conn.execute(
        "SELECT name, pid FROM v_processes WHERE alive AND state = 'running'"
    ).fetchall()
    return {name: pid for name, pid in rows}


def _seed_mergeable_memories(db_url: str) -> None:
    """Three related memories, so the consolidate worker has one merge to do."""
    from types import SimpleNamespace

    from agent.config import load_settings
    from agent.domain.contextual import IndexConfig
    from agent.domain.gates import EntryGateConfig
    from agent.providers.local import LocalEmbedder
    from agent.providers.text import default_counter
    from agent.services.access import introspect
    from agent.services.records.turns import TurnWriter
    from tests.conftest import make_session

    emb = LocalEmbedder()
    settings = load_settings()
    holder = SimpleNamespace(writer=TurnWriter(
        emb, emb, default_counter().count, EntryGateConfig.from_table(settings.entry_gate),
        None, IndexConfig.from_table(settings.recall)))
    with psycopg.connect(db_url, autocommit=True) as conn:
        for text in ("I love hiking in the Alps every summer.",
                     "Hiking in the Swiss Alps is my favourite summer holiday.",
                     "Every summer I go hiking in the Alps with my friends."):
            sid = make_session(conn)
            user = user_of(conn, sid)
            introspect.remember(conn, holder, sid, user, text)


def test_up_supervises_restarts_and_stops(db_url: str, stub_server: StubServer) -> None:
    _seed_mergeable_memories(db_url)
    # consolidation on a model (the stub): the heuristic fallback forms no insight
    stub_server.set_reply("Summer hiking in the Alps is a recurring favourite.")
    env = cogd_env(DATABASE_URL=db_url, COGD_PROCESS__HEARTBEAT_INTERVAL_S="0.5",
                   COGD_LLM__ROLES__CONSOLIDATION="openai",
                   COGD_LLM__PROFILES__OPENAI__BASE_URL=stub_server.openai_base_url,
                   COGD_LLM__PROFILES__OPENAI__MODEL="stub-chat",
                   OPENAI_API_KEY="sk-test-not-real", COGD_RETRY__MAX_RETRIES="0")
    up = subprocess.Popen(
        [COGD, "up", "--workers", "consolidate,idle"], env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    output = ""
    try:
        with psycopg.connect(db_url, autocommit=True) as conn:
            alive = _wait(lambda: (a := _alive(conn)) and {"up", "consolidate", "idle"} <= set(a)
                          and a)
            assert alive, "workers did not come up"

            second = run("up", "--workers", "idle", env=env, timeout=60)
            assert_clean_error(second, "cogd up is already running")

            # a crashed child is restarted with backoff (how fast: the reliability report)
            os.kill(alive["idle"], signal.SIGKILL)
            restarted = _wait(
                lambda: (p := _alive(conn).get("idle")) and p != alive["idle"] and p
            )
            assert restarted, "idle was not restarted"

            # the consolidate worker's first pass merged; killed and restarted, it
            # finds nothing left to do: the work is not done twice
            merged = _wait(lambda: conn.execute(
                "SELECT count(*) FROM consolidation_log WHERE operation = 'merge'"
            ).fetchone()[0], seconds=60)
            assert merged == 1
            os.kill(alive["consolidate"], signal.SIGKILL)
            again = _wait(lambda: (p := _alive(conn).get("consolidate"))
                          and p != alive["consolidate"] and p)
            assert again, "consolidate was not restarted"
            time.sleep(2)  # its first pass after the restart
            assert conn.execute("SELECT count(*) FROM memories WHERE memory_type = 'insight'"
                                ).fetchone() == (1,)
            assert conn.execute("SELECT count(*) FROM consolidation_log WHERE operation = "
                                "'merge'").fetchone() == (1,)

            up.send_signal(signal.SIGINT)
            assert up.wait(60) == 0
            states = dict(conn.execute(
                "SELECT name, state FROM process_heartbeats WHERE pid = ANY(%s)",
                ([up.pid, again, restarted],),
            ).fetchall())
            assert states == {"up": "stopped", "consolidate": "stopped", "idle": "stopped"}
    finally:
        if up.poll() is None:  # a failed run: stop up and every worker it started
            os.killpg(up.pid, signal.SIGKILL)
        try:
            output = up.communicate(timeout=60)[0] or ""
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
            output = up.communicate()[0] or ""
    assert "idle exited with -9; restarting" in output
    assert "consolidate exited with -9; restarting" in output


def test_concurrent_first_start_of_the_embedded_server(embedded_dir: Path) -> None:
    """Several commands racing to initialise a fresh data dir all attach to one server."""
    env = cogd_env(COGD_DATA_DIR=str(embedded_dir))
    procs = [
        subprocess.Popen([COGD, "status", "--json"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=180) for p in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert json.loads(out)["database"]["reachable"] is True


def test_a_command_after_a_killed_postmaster_starts_the_server_again(
    embedded_dir: Path,
) -> None:
    """SIGKILL of the postmaster leaves postmaster.pid and, for a moment, a zombie that
    Postgres takes for a live server: the next command waits for it, starts the server
    (WAL recovery) and finds every committed row; no internal error."""
    from agent.db.embedded import crashed, server_running

    env = cogd_env(COGD_DATA_DIR=str(embedded_dir))
    url = run("db-url", env=env).stdout.strip()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE crash_probe (x int)")
        conn.execute("INSERT INTO crash_probe VALUES (1), (2)")
    for _ in range(2):
        pid = server_running(embedded_dir)
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while not crashed(embedded_dir) and time.monotonic() < deadline:
            time.sleep(0.01)  # the kill is delivered, the process not yet dead
        assert crashed(embedded_dir)
        out = run("status", "--json", env=env)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["database"]["reachable"] is True
        assert server_running(embedded_dir) not in (None, pid)
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM crash_probe").fetchone() == (2,)
    log = (embedded_dir / "pg" / "log").read_text()
    assert "database system was not properly shut down; automatic recovery" in log
