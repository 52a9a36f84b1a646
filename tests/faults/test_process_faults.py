"""kill -9 under a scripted load, and Postgres restarted under load (issue #8).

The load is the real REPL: `cogd chat --json` with piped stdin, one message at a time,
each acknowledged by the reply it prints. Faults are injected at seeded random moments
(the seed is recorded). Afterwards every acknowledged turn must be in day_table, once,
with its reply; every queued message must have been answered; nothing is duplicated.
Restart times are recorded for docs/reliability.md, not asserted (STYLE: no timed
assertions in tests).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.db.embedded import ensure_server, server_running, stop_server
from tests.acceptance.test_cli import COGD
from tests.conftest import cogd_env, wait_for
from tests.faults.conftest import Reliability
from tests.stubserver import StubServer, stub_server_fixture  # noqa: F401

# the LLM profile of every role in the process faults: `heuristic` (the default: fast,
# deterministic; every CI run) or `local`, the bundled SmolLM2 a user runs offline
# (`python -m bench reliability --llm local`, a slower run kept out of CI)
FAULT_LLM = os.environ.get("COGD_FAULT_LLM", "heuristic")
if FAULT_LLM not in ("heuristic", "local"):
    raise pytest.UsageError(f"COGD_FAULT_LLM={FAULT_LLM!r}: heuristic or local")
LLM_ENV = {f"COGD_LLM__ROLES__{r}": FAULT_LLM
           for r in ("SYSTEM1", "SYSTEM2", "CONSOLIDATION", "NIGHT_CYCLE")}
FAST = {"COGD_PROCESS__HEARTBEAT_INTERVAL_S": "0.5", "COGD_BUS__POLL_INTERVAL_S": "1.0",
        "COGD_BUS__RECONNECT_DELAY_S": "0.5", "COGD_IDLE__SECONDS_PER_MINUTE": "1"}
WORKERS = ("loop", "consolidate", "idle")
SEED = int(os.environ.get("COGD_FAULT_SEED", "8"))



def pid_alive(pid: int) -> bool:
    """Running and not a zombie (an orphan may wait a moment to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def registered(url: str) -> dict[str, list[tuple[int, str]]]:
    """name -> [(pid, state)] of processes that are really running."""
    out: dict[str, list[tuple[int, str]]] = {}
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=2) as conn:
            rows = conn.execute("SELECT name, pid, state FROM process_heartbeats "
                                "WHERE state <> 'stopped'").fetchall()
    except (psycopg.OperationalError, psycopg.errors.UndefinedTable):
        return out  # the server is down, or `cogd up` has not migrated yet
    for name, pid, state in rows:
        if pid_alive(pid):
            out.setdefault(name, []).append((pid, state))
    return out


def running_pid(url: str, name: str, exclude: set[int] = frozenset()) -> int | None:  # type: ignore[assignment]
    for pid, state in registered(url).get(name, []):
        if pid not in exclude and state == "running":
            return pid
    return None


class Up:
    """`cogd up` as a user starts it, output to a file (never a pipe that can fill)."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self.out = log.open("a")
        self.proc = subprocess.Popen([COGD, "up"], env=env, start_new_session=True,
                                     stdout=self.out, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.out.close()


class ChatLoad(threading.Thread):
    """The REPL with piped stdin: sends a message, waits for its reply line, repeats."""

    def __init__(self, env: dict[str, str], log: Path, gap_s: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.err = log.open("a")
        self.proc = subprocess.Popen([COGD, "chat", "--json", "--timeout", "240"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, text=True, bufsize=1)
        self.gap_s = gap_s
        self.sent: list[str] = []
        self.acked: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self.failure: str | None = None

    def run(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        i = 0
        while not self.stopping.is_set():
            i += 1
            text = f"fault load message {i}: my reference number is {1000 + i * 7}"
            try:
                self.proc.stdin.write(text + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError) as exc:
                self.failure = f"the REPL closed its input: {exc}"
                return
            self.sent.append(text)
            line = self.proc.stdout.readline()
            if not line:
                self.failure = "the REPL exited"
                return
            reply = json.loads(line)
            self.acked.append({"text": text, "inbox_id": reply["inbox_id"],
                               "reply": reply["reply"]})
            time.sleep(self.gap_s)

    def finish(self, seconds: float = 240) -> None:
        self.stopping.set()
        self.join(seconds)
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)
        self.close()

    def close(self) -> None:
        """Release everything (also after a failure)."""
        self.stopping.set()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError):
                    stream.close()
        self.err.close()


def count_losses(url: str, load: ChatLoad) -> dict[str, Any]:
    """What the checks below judge, counted without judging (the reliability report records
    it first): acknowledged turns missing or without their reply, duplicate turns and
    memories, memories merged twice, messages never answered."""
    with psycopg.connect(url, autocommit=True) as conn:
        turns = {(r[0], r[1]): r[2] for r in conn.execute(
            "SELECT inbox_id, role, content FROM day_table WHERE inbox_id IS NOT NULL")}
        dup_turns = conn.execute(
            "SELECT count(*) FROM (SELECT inbox_id, role FROM day_table WHERE inbox_id IS NOT "
            "NULL GROUP BY 1, 2 HAVING count(*) > 1) d").fetchone()[0]
        unanswered = conn.execute(
            "SELECT id, status, error FROM inbox WHERE status <> 'done'").fetchall()
        # work done twice: two memories from one turn, or one memory merged twice
        dup_memories = conn.execute(
            "SELECT count(*) FROM (SELECT source_entry_id, memory_type FROM memories "
            "WHERE source_entry_id IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1) d"
        ).fetchone()[0]
        merged_twice = conn.execute(
            "SELECT count(*) FROM (SELECT target_id FROM memory_links WHERE link_type = "
            "'supersedes' GROUP BY 1 HAVING count(*) > 1) d").fetchone()[0]
        queued = conn.execute("SELECT count(*) FROM inbox").fetchone()[0]
    lost = [a for a in load.acked if turns.get((a["inbox_id"], "user")) != a["text"]
            or turns.get((a["inbox_id"], "assistant")) is None]
    return {"turns_sent": len(load.sent), "turns_acknowledged": len(load.acked),
            "turns_lost": len(lost), "duplicate_turns": int(dup_turns),
            "duplicate_memories": int(dup_memories), "merged_twice": int(merged_twice),
            "unanswered": len(unanswered), "queued": int(queued),
            "examples": {"lost": lost[:3], "unanswered": [list(map(str, u))
                                                           for u in unanswered[:3]]}}


def assert_nothing_lost(counts: dict[str, Any], load: ChatLoad) -> None:
    """Every acknowledged turn is in day_table once, with its reply; every queued message
    was answered; no duplicate turns or memories."""
    assert load.failure is None, load.failure
    assert counts["turns_lost"] == 0, \
        f"acknowledged turns missing from day_table: {counts['examples']['lost']}"
    assert counts["duplicate_turns"] == 0
    assert counts["duplicate_memories"] == 0
    assert counts["merged_twice"] == 0
    assert counts["unanswered"] == 0, counts["examples"]["unanswered"]
    assert counts["queued"] == counts["turns_sent"]


def record_load(reliability: Reliability, counts: dict[str, Any], **fields: Any) -> None:
    reliability.add("load", llm=FAULT_LLM, **fields,
                    **{k: v for k, v in counts.items() if k != "examples"})


@pytest.fixture
def fault_env(db_url: str, tmp_path: Path) -> dict[str, str]:
    return cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"),
                    **LLM_ENV, **FAST)


def test_the_loss_check_sees_a_lost_turn(db_url: str, fault_env: dict[str, str],
                                         tmp_path: Path) -> None:
    """The check the fault tests rely on fails when an acknowledged turn is gone (a check
    that cannot fail proves nothing): three turns through the REPL (answered in-process,
    no `cogd up`), then one user turn removed behind the schema's back."""
    load = ChatLoad(fault_env, tmp_path / "chat.log")
    try:
        load.start()
        assert wait_for(lambda: len(load.acked) >= 3, 180), \
            (tmp_path / "chat.log").read_text()[-2000:]
        load.finish()
    finally:
        load.close()
    counts = count_losses(db_url, load)
    assert counts["turns_lost"] == 0 and counts["turns_acknowledged"] >= 3
    assert_nothing_lost(counts, load)
    victim = load.acked[1]
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")  # past triggers and FKs
        gone = conn.execute("DELETE FROM day_table WHERE inbox_id = %s AND role = 'user'",
                            (victim["inbox_id"],)).rowcount
    assert gone == 1
    counts = count_losses(db_url, load)
    assert counts["turns_lost"] == 1 and counts["examples"]["lost"] == [victim]
    with pytest.raises(AssertionError, match="missing from day_table"):
        assert_nothing_lost(counts, load)


def test_kill_9_each_worker_and_the_supervisor_under_load(
    db_url: str, fault_env: dict[str, str], tmp_path: Path, reliability: Reliability,
) -> None:
    rng = random.Random(SEED)
    up = Up(fault_env, tmp_path / "up.log")
    load: ChatLoad | None = None
    try:
        assert wait_for(lambda: all(running_pid(db_url, w) for w in WORKERS), 120), \
            (tmp_path / "up.log").read_text()
        load = ChatLoad(fault_env, tmp_path / "chat.log")
        load.start()
        assert wait_for(lambda: len(load.acked) >= 3, 60), "the load never got a reply"
        killed: set[int] = set()
        # each worker twice, in a seeded random order, at seeded random moments
        for name in rng.sample(WORKERS * 2, k=len(WORKERS) * 2):
            time.sleep(rng.uniform(1.0, 4.0))
            victim = running_pid(db_url, name)
            assert victim is not None, f"{name} is not running"
            acked_before = len(load.acked)
            os.kill(victim, signal.SIGKILL)
            t0 = time.monotonic()
            killed.add(victim)
            new = wait_for(lambda n=name: next((p for p, _ in registered(db_url).get(n, [])
                                                if p not in killed), None), 60, every=0.05)
            t_registered = time.monotonic() - t0
            assert new, f"{name} was not restarted after kill -9"
            assert wait_for(lambda n=name: running_pid(db_url, n, killed), 120)
            reliability.add("kill", process=name, pid=victim, acked_before=acked_before,
                            restart_s=round(t_registered, 2),
                            ready_s=round(time.monotonic() - t0, 2))
        # the supervisor: its children get SIGTERM from the kernel and stop; a new
        # `cogd up` (what a restart policy does) brings everything back
        children = {w: running_pid(db_url, w) for w in WORKERS}
        time.sleep(rng.uniform(0.5, 2.0))
        os.kill(up.proc.pid, signal.SIGKILL)
        t0 = time.monotonic()
        up.proc.wait(10)
        gone = wait_for(lambda: not any(p and pid_alive(p) for p in children.values()), 60)
        t_orphans_gone = time.monotonic() - t0
        assert gone, f"workers outlived a killed supervisor: {children}"
        up.out.close()
        up = Up(fault_env, tmp_path / "up.log")
        back = wait_for(lambda: all(running_pid(db_url, w, set(children.values()) | killed)
                                    for w in WORKERS), 120)
        assert back, (tmp_path / "up.log").read_text()
        reliability.add("kill", process="up", pid=children, children_stopped_s=round(
            t_orphans_gone, 2), ready_s=round(time.monotonic() - t0, 2),
            note="children stop on the kernel's SIGTERM; the test starts a new `cogd up`")
        acked_at_end = len(load.acked)
        assert wait_for(lambda: len(load.acked) >= acked_at_end + 3, 120), \
            "no replies after the supervisor came back"
        load.finish()
        counts = count_losses(db_url, load)
        record_load(reliability, counts, scenario="kill -9 workers and supervisor", seed=SEED)
        assert_nothing_lost(counts, load)
    finally:
        if load is not None:
            load.close()
        up.stop()
    log = (tmp_path / "up.log").read_text()
    assert "loop exited with -9; restarting" in log


def _last_run(url: str) -> tuple[str, int] | None:
    """(status, last completed stage) of the newest night-cycle run."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("SELECT status, stage FROM night_cycle_runs "
                               "ORDER BY run_id DESC LIMIT 1").fetchone()
    except psycopg.OperationalError:
        return None
    return None if row is None else (row[0], int(row[1]))


def _nights(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT run_id::text, status FROM night_cycle_runs "
                            "ORDER BY started_at").fetchall()


def test_kill_9_the_night_cycle_under_load_then_resume(
    db_url: str, fault_env: dict[str, str], tmp_path: Path, reliability: Reliability,
) -> None:
    from agent.cortex.lance import BLOCKS, LanceCortex
    from tests.integration.test_night_cycle import NOW, corpus_jsonl

    rng = random.Random(SEED + 1)
    jsonl = tmp_path / "turns.jsonl"
    jsonl.write_text(corpus_jsonl(240, 6, NOW, seed=3))
    imported = subprocess.run([COGD, "import", str(jsonl), "--json"], env=fault_env,
                              capture_output=True, text=True, timeout=600)
    assert imported.returncode == 0, imported.stderr
    up = Up(fault_env, tmp_path / "up.log")
    load: ChatLoad | None = None
    try:
        assert wait_for(lambda: all(running_pid(db_url, w) for w in WORKERS), 120)
        load = ChatLoad(fault_env, tmp_path / "chat.log", gap_s=0.2)
        load.start()
        kills = []
        # killed twice: once after a random stage of 1-4 completed, then (resumed) after
        # one of 5-7, plus a random moment into the next stage
        for attempt, stages in enumerate(((1, 4), (5, 7))):
            target = rng.randint(*stages)
            night = subprocess.Popen([COGD, "night-cycle", "--json"] + (
                ["--resume"] if attempt else []), env=fault_env, start_new_session=True,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            reached = wait_for(lambda t=target, n=night: n.poll() is not None or (
                (r := _last_run(db_url)) is not None and r[1] >= t), 600, every=0.05)
            assert reached and night.poll() is None, "the night cycle ended before the kill"
            time.sleep(rng.uniform(0.0, 0.5))
            night.send_signal(signal.SIGKILL)
            night.wait(30)
            kills.append({"after_stage": target, "stage_reached": _last_run(db_url)})
        t0 = time.monotonic()
        resumed = subprocess.run([COGD, "night-cycle", "--resume", "--json"], env=fault_env,
                                 capture_output=True, text=True, timeout=900)
        assert resumed.returncode == 0, resumed.stderr
        result = json.loads(resumed.stdout)
        assert result["status"] == "done"
        load.finish()
        counts = count_losses(db_url, load)
        record_load(reliability, counts, scenario="kill -9 night-cycle, then --resume",
                    seed=SEED + 1)
        assert_nothing_lost(counts, load)
    finally:
        if load is not None:
            load.close()
        up.stop()
    runs = _nights(db_url)
    assert runs[-1][1] == "done"
    assert all(status != "running" for _, status in runs), runs
    with psycopg.connect(db_url, autocommit=True) as conn:
        # a turn belongs to one block at most: no block was written twice
        twice = conn.execute(
            "SELECT count(*) FROM (SELECT e FROM holographic_blocks, "
            "jsonb_array_elements_text(flux_metrics->'entry_ids') e "
            "GROUP BY e HAVING count(*) > 1) d").fetchone()
        blocks = conn.execute("SELECT count(*) FROM holographic_blocks WHERE "
                              "flux_metrics->>'kind' IS DISTINCT FROM 'metablock'").fetchone()
    assert twice == (0,)
    assert blocks is not None and blocks[0] > 0
    cortex = LanceCortex(str(tmp_path / "data" / "cortex"), 384, 384)
    ids = [r["block_id"] for r in cortex.rows(BLOCKS, columns=["block_id"])]
    assert ids and len(ids) == len(set(ids))
    reliability.add("kill", process="night-cycle", kills=kills, runs=len(runs),
                    resume_s=round(time.monotonic() - t0, 2), blocks=blocks[0],
                    cortex_blocks=len(ids))


# how the server goes away: a clean stop, an immediate stop (no checkpoint: the next
# start replays the WAL, as after a crash), and the postmaster killed with SIGKILL
PG_OUTAGES = {
    "fast": "Postgres stopped (pg_ctl -m fast) and started twice",
    "immediate": "Postgres stopped (pg_ctl -m immediate: crash recovery) and started twice",
    "kill": "Postgres postmaster killed (SIGKILL) twice; cogd up started it again",
}


@pytest.mark.parametrize("how", list(PG_OUTAGES))
def test_postgres_restart_under_load(
    own_server: Path, tmp_path: Path, reliability: Reliability, how: str,
) -> None:
    """Chat load while the embedded server goes away twice. A stopped server is started
    by a fresh cogd process, as a user would; a killed one by `cogd up` itself (nobody
    else touches it), which must also wait for the dead postmaster to be reaped."""
    env = cogd_env(COGD_DATA_DIR=str(own_server), **LLM_ENV, **FAST)
    url = ensure_server(own_server).uri
    rng = random.Random(SEED + 2)
    up = Up(env, tmp_path / "up.log")
    load: ChatLoad | None = None
    try:
        assert wait_for(lambda: all(running_pid(url, w) for w in WORKERS), 120), \
            (tmp_path / "up.log").read_text()
        before = {w: running_pid(url, w) for w in WORKERS}
        load = ChatLoad(env, tmp_path / "chat.log")
        load.start()
        assert wait_for(lambda: len(load.acked) >= 3, 60)
        outages = []
        for _ in range(2):
            time.sleep(rng.uniform(1.0, 4.0))
            acked = len(load.acked)
            t0 = time.monotonic()
            if how == "kill":
                postmaster = server_running(own_server)
                assert postmaster is not None
                os.kill(postmaster, signal.SIGKILL)
                down_s = 0.0
                assert wait_for(lambda pid=postmaster: server_running(own_server) not in
                                (None, pid), 120), (tmp_path / "up.log").read_text()[-2000:]
            else:
                assert stop_server(own_server, mode=how)
                down_s = rng.uniform(1.0, 3.0)
                time.sleep(down_s)
                # started by a fresh process (pgserver caches servers per process, so
                # this one cannot restart what it stopped); `cogd up` leaves a server
                # stopped on purpose alone
                started = subprocess.run([COGD, "db-url"], env=env, capture_output=True,
                                         text=True, timeout=120)
                assert started.returncode == 0, started.stderr
            t_up = time.monotonic()
            # replies resume: workers reconnected and LISTEN again (or poll)
            resumed = wait_for(lambda a=acked: len(load.acked) > a + 2, 120)
            assert resumed, (tmp_path / "chat.log").read_text()[-2000:]
            outages.append({"down_s": round(down_s, 2) if how != "kill" else
                            round(t_up - t0, 2),
                            "first_reply_after_restart_s": round(time.monotonic() - t_up, 2),
                            "total_s": round(time.monotonic() - t0, 2)})
        # the workers reconnected in place: none of them had to be restarted
        after = {w: running_pid(url, w) for w in WORKERS}
        load.finish()
        counts = count_losses(url, load)
        record_load(reliability, counts, scenario=PG_OUTAGES[how], seed=SEED + 2)
        assert_nothing_lost(counts, load)
    finally:
        if load is not None:
            load.close()
        up.stop()
    assert after == before, (before, after)
    if how == "kill":
        assert "the embedded Postgres had crashed; started it again" in \
            (tmp_path / "up.log").read_text()
    reliability.add("postgres_restart", mode=how, outages=outages, worker_restarts=0)


def _loop(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("a") as out:
        return subprocess.Popen([COGD, "loop"], env=env, start_new_session=True,
                                stdout=out, stderr=subprocess.STDOUT)


def _in_flight(url: str) -> tuple[int, int] | None:
    """(inbox id, OS pid of the loop answering it) of a message being answered."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT id, substring(claimed_by FROM ' os=([0-9]+) ')::int "
                           "FROM inbox WHERE status = 'processing' ORDER BY id LIMIT 1"
                           ).fetchone()
    return (int(row[0]), int(row[1])) if row and row[1] else None


def test_two_loops_a_slow_model_and_a_kill_in_the_middle_of_a_turn(
    db_url: str, tmp_path: Path, stub_server: StubServer, reliability: Reliability,
) -> None:
    """Two `cogd loop` processes share the inbox; the model (a stub on 127.0.0.1) takes
    1.5 s per answer. Three times, the loop holding a message is killed (SIGKILL) while
    the model works on it: the other loop takes the message over (its claimer's
    connection is gone), and a new loop replaces the killed one. Every acknowledged
    message is answered once: no turn, reply or memory twice."""
    stub_server.delay_next(500, 1.5)
    env = cogd_env(COGD_DATABASE_URL=db_url, COGD_DATA_DIR=str(tmp_path / "data"),
                   **{**LLM_ENV, "COGD_LLM__ROLES__SYSTEM1": "openai",
                      "COGD_LLM__ROLES__SYSTEM2": "openai"}, **FAST,
                   COGD_LLM__PROFILES__OPENAI__BASE_URL=stub_server.openai_base_url,
                   COGD_LLM__PROFILES__OPENAI__MODEL="stub-chat",
                   OPENAI_API_KEY="sk-test-not-real", COGD_RETRY__MAX_RETRIES="0")
    log = tmp_path / "loops.log"
    loops = [_loop(env, log), _loop(env, log)]
    load: ChatLoad | None = None
    kills: list[dict[str, Any]] = []
    try:
        assert wait_for(lambda: len([p for p, s in registered(db_url).get("loop", [])
                                     if s == "running"]) == 2, 120), log.read_text()[-2000:]
        load = ChatLoad(env, tmp_path / "chat.log")
        load.start()
        assert wait_for(lambda: len(load.acked) >= 2, 120), \
            (tmp_path / "chat.log").read_text()[-2000:]
        for _ in range(3):
            asked = stub_server.count()
            # a message claimed and its model call under way
            held = wait_for(lambda a=asked: stub_server.count() > a and _in_flight(db_url), 60,
                            every=0.02)
            assert held, "no message in flight"
            inbox_id, pid = held
            acked = len(load.acked)
            t0 = time.monotonic()
            os.kill(pid, signal.SIGKILL)
            for p in loops:
                if p.pid == pid:
                    p.wait(30)
            loops.append(_loop(env, log))
            assert wait_for(lambda a=acked: len(load.acked) > a, 120), \
                (tmp_path / "chat.log").read_text()[-2000:]
            with psycopg.connect(db_url, autocommit=True) as conn:
                owner = conn.execute("SELECT status, claimed_by FROM inbox WHERE id = %s",
                                     (inbox_id,)).fetchone()
            kills.append({"inbox_id": inbox_id, "killed_pid": pid,
                          "answered_after_s": round(time.monotonic() - t0, 2),
                          "finished_by_other": owner is not None and f" os={pid} " not in
                          str(owner[1]), "status": owner[0] if owner else None})
        load.finish()
        counts = count_losses(db_url, load)
        record_load(reliability, counts, scenario="two loops, slow model (1.5 s), the loop "
                    "holding a message killed 3x mid-turn", seed=SEED)
        assert_nothing_lost(counts, load)
    finally:
        if load is not None:
            load.close()
        for p in loops:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in loops:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    reliability.add("takeover", kills=kills)
    assert [k["status"] for k in kills] == ["done"] * 3
    assert all(k["finished_by_other"] for k in kills), kills
