"""A stuck turn does not hold a shutdown (issue 38, finding 3), with real processes.

The test hook `pause:loop-turn:<file>` (agent/testhooks.py) stops a loop right after it
claimed a message, as a turn stuck for up to two minutes would. SIGTERM must still stop
`cogd loop` and `cogd serve` (whose loop runs in-process) within [process]
shutdown_grace_s (set to a few seconds here), well before the stuck turn would end; the
message is then taken over by the next loop and answered, its attempt counted. Without a
signal, a `cogd loop` whose turn runs past [process] turn_timeout_s exits by itself.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx
import psycopg

from agent import inbox
from tests.acceptance.test_cli import COGD, run
from tests.conftest import cogd_env, free_port, make_session, wait_for
from tests.faults.test_process_faults import FAST

GRACE_S = "3"
# the bound the test waits for a stop: far below the hook's pause (PAUSE_MAX_S, 120 s), far
# above the grace; a stop that waited for the stuck turn would miss it
STOP_WAIT_S = 60


def _env(db_url: str, tmp_path: Path, hook: bool) -> dict[str, str]:
    extra = {"COGD_TEST_HOOK": f"pause:loop-turn:{tmp_path / 'stuck'}"} if hook else {}
    return cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"),
                    COGD_LLM__ROLES__SYSTEM1="heuristic", COGD_LLM__ROLES__SYSTEM2="heuristic",
                    COGD_PROCESS__SHUTDOWN_GRACE_S=GRACE_S, **FAST, **extra)


def _status(db_url: str, inbox_id: int) -> tuple[str, int]:
    with psycopg.connect(db_url, autocommit=True) as conn:
        row = conn.execute("SELECT status, attempts FROM inbox WHERE id = %s",
                           (inbox_id,)).fetchone()
    assert row is not None
    return row[0], int(row[1])


def test_sigterm_stops_a_loop_whose_turn_is_stuck_and_the_message_is_answered_after(
    db_url: str, tmp_path: Path,
) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        msg = inbox.enqueue(conn, make_session(conn), "hello there", stream=False, key="k1")
    log = (tmp_path / "loop.log").open("w")
    stuck = subprocess.Popen([COGD, "loop"], env=_env(db_url, tmp_path, hook=True),
                             stdout=log, stderr=subprocess.STDOUT)
    try:
        assert wait_for(lambda: (tmp_path / "stuck").exists(), 120), \
            (tmp_path / "loop.log").read_text()[-2000:]
        assert _status(db_url, msg) == ("processing", 1)
        stuck.send_signal(signal.SIGTERM)
        code = stuck.wait(STOP_WAIT_S)  # TimeoutExpired: the stop waited for the turn
    finally:
        if stuck.poll() is None:
            stuck.kill()
            stuck.wait()
        log.close()
    assert code == 3, (tmp_path / "loop.log").read_text()[-2000:]  # EXIT_STUCK
    assert "did not finish within" in (tmp_path / "loop.log").read_text()

    # the next loop takes the message over (its claimer's connection died) and answers it
    log = (tmp_path / "loop2.log").open("w")
    fresh = subprocess.Popen([COGD, "loop"], env=_env(db_url, tmp_path, hook=False),
                             stdout=log, stderr=subprocess.STDOUT)
    try:
        assert wait_for(lambda: _status(db_url, msg)[0] == "done", 120), \
            (tmp_path / "loop2.log").read_text()[-2000:]
    finally:
        fresh.send_signal(signal.SIGTERM)
        fresh.wait(STOP_WAIT_S)
        log.close()
    assert _status(db_url, msg) == ("done", 2)


def test_a_loop_whose_turn_runs_past_turn_timeout_exits_and_leaves_the_message_to_the_next(
    db_url: str, tmp_path: Path,
) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        msg = inbox.enqueue(conn, make_session(conn), "hello there", stream=False, key="k1")
    env = {**_env(db_url, tmp_path, hook=True), "COGD_PROCESS__TURN_TIMEOUT_S": "2"}
    log = (tmp_path / "loop.log").open("w")
    stuck = subprocess.Popen([COGD, "loop"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        assert wait_for(lambda: (tmp_path / "stuck").exists(), 120), \
            (tmp_path / "loop.log").read_text()[-2000:]
        code = stuck.wait(STOP_WAIT_S)  # no signal: the watchdog ends the stuck turn
    finally:
        if stuck.poll() is None:
            stuck.kill()
            stuck.wait()
        log.close()
    assert code == 3, (tmp_path / "loop.log").read_text()[-2000:]  # EXIT_STUCK
    assert "turn_timeout_s" in (tmp_path / "loop.log").read_text()
    assert _status(db_url, msg) == ("processing", 1)  # its attempt counted; taken over next


def test_sigterm_stops_serve_while_its_in_process_loop_is_stuck(
    db_url: str, tmp_path: Path,
) -> None:
    env = _env(db_url, tmp_path, hook=True)
    made = run("token", "create", "--user", "alice", "--create-user", "--json", env=env)
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout)["token"]
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen([COGD, "serve", "--port", str(port)], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    answers: list[Any] = []

    def chat() -> None:  # waits for a reply the stuck turn never gives
        try:
            answers.append(httpx.post(
                f"http://127.0.0.1:{port}/v1/chat/completions", timeout=STOP_WAIT_S * 2,
                headers={"Authorization": f"Bearer {token}"},
                json={"model": "cogd", "messages": [{"role": "user", "content": "hello"}]}))
        except httpx.HTTPError as exc:
            answers.append(exc)

    asking = threading.Thread(target=chat, daemon=True)
    try:
        assert wait_for(lambda: _healthy(port), 120), (tmp_path / "serve.log").read_text()
        asking.start()
        assert wait_for(lambda: (tmp_path / "stuck").exists(), 120), \
            (tmp_path / "serve.log").read_text()[-2000:]
        proc.send_signal(signal.SIGTERM)
        proc.wait(STOP_WAIT_S)  # TimeoutExpired: the stop waited for the stuck turn
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    asking.join(STOP_WAIT_S)
    # the chat waiting on the stuck turn is told why, and its message is kept
    assert answers and isinstance(answers[0], httpx.Response), answers
    assert answers[0].status_code == 503 and "stopping" in answers[0].text
    assert "Traceback" not in (tmp_path / "serve.log").read_text()
    status, attempts = _status_of_only_row(db_url)
    assert status == "processing" and attempts == 1  # kept: the next loop answers it


def _status_of_only_row(db_url: str) -> tuple[str, int]:
    with psycopg.connect(db_url, autocommit=True) as conn:
        rows = conn.execute("SELECT id FROM inbox").fetchall()
    assert len(rows) == 1
    return _status(db_url, int(rows[0][0]))


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
