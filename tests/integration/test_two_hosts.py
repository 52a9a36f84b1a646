"""Loop workers on several hosts (issue 43 item 4): two `cogd up --workers loop`
processes, each with a data directory of its own, share one Postgres (DATABASE_URL) and one
cortex on an S3-compatible server (moto, tests/objectstore.py). Both answer, each message
is answered once (the schema's unique indexes hold it), and both recall from the shared
cortex. The LLM roles are the heuristic ones: the test is about the processes."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.config import Settings
from agent.cortex.lance import BLOCKS, LanceCortex
from agent.inbox import Client
from agent.runtime import Runtime
from tests.conftest import cogd_env, make_session, wait_for
from tests.objectstore import s3_server

FACT = "The orchard's gate code is 4417; the key hangs behind the blue shed."
QUESTION = "What is the gate code of the orchard, and where is the key?"
ROUND = 6  # messages sent at once; rounds go on until both hosts answered some
MIN_EACH = 2
LLM_ENV = {f"COGD_LLM__ROLES__{r}": "heuristic"
           for r in ("SYSTEM1", "SYSTEM2", "CONSOLIDATION", "NIGHT_CYCLE")}
FAST = {"COGD_PROCESS__HEARTBEAT_INTERVAL_S": "0.5", "COGD_BUS__POLL_INTERVAL_S": "1.0"}



class Host:
    """`cogd up --workers loop` with a data directory of its own, output to a file."""

    def __init__(self, name: str, env: dict[str, str], root: Path) -> None:
        self.name = name
        self.data = root / name
        self.log = root / f"{name}.log"
        self.out = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agent.cli", "up", "--workers", "loop"],
            env={**env, "COGD_DATA_DIR": str(self.data)}, start_new_session=True,
            stdout=self.out, stderr=subprocess.STDOUT)

    def loop_pid(self) -> int | None:
        """The loop child's pid, from the supervisor's 'started loop (pid N)' line."""
        found = re.findall(r"started loop \(pid (\d+)\)", self.log.read_text())
        return int(found[-1]) if found else None

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()
        return self.proc.returncode


def _seed_cortex(settings: Settings) -> str:
    """One block in the shared cortex, as a night cycle would have migrated it."""
    vec = [float(x) for x in Runtime(settings).universal.embed_documents([FACT])[0]]
    now = datetime.now(UTC)
    block_id = str(uuid.uuid4())
    LanceCortex.from_settings(settings).upsert(BLOCKS, [{
        "block_id": block_id, "kind": "block", "session_id": str(uuid.uuid4()),
        "user_id": None, "user_tier": "normal", "run_id": 1, "prose_text": FACT,
        "live_zones_text": FACT, "prose": "{}", "universal": vec, "native": vec,
        "native_model": "local:all-MiniLM-L6-v2-int8", "flux_metrics": "{}",
        "salience_scores": "{}", "composite": 0.5, "coherence_gain": 0.1,
        "ties_merge_weight": 0.3, "citations": "[]", "preoccupation_centroid_id": None,
        "parent_metablock_id": None, "continues_from": None, "continued_by": None,
        "session_continuity_flag": False, "arc_start_time": now, "arc_end_time": now,
        "created_at": now, "migrated_at": now, "last_accessed": None,
        "vector_history": "[]"}], "block_id")
    return block_id


@pytest.mark.slow  # the local embedder, a night or two processes: 30-60 s
def test_two_loop_hosts_share_one_database_and_one_s3_cortex(
    settings: Settings, db_url: str, conn: psycopg.Connection[Any], tmp_path: Path,
) -> None:
    with s3_server() as s3:
        settings.cortex.uri = s3.uri("shared/cortex")
        settings.cortex.storage_options = s3.storage_options
        block_id = _seed_cortex(settings)
        env = cogd_env(DATABASE_URL=db_url, COGD_CORTEX__URI=settings.cortex.uri,
                       **s3.env, **LLM_ENV, **FAST)
        hosts = [Host(name, env, tmp_path) for name in ("host-a", "host-b")]
        try:
            # both supervisors run: a loop-only `cogd up` takes no supervisor lock
            pids = wait_for(lambda: all(h.loop_pid() for h in hosts) and
                            [h.loop_pid() for h in hosts], 60)
            assert pids, [h.log.read_text()[-2000:] for h in hosts]
            assert wait_for(lambda: conn.execute(
                "SELECT count(DISTINCT pid) FROM process_heartbeats WHERE name = 'loop' "
                "AND state = 'running' AND pid = ANY(%s)", (pids,)).fetchone() == (2,), 90), \
                [h.log.read_text()[-2000:] for h in hosts]

            session = make_session(conn)
            client = Client(db_url, "test-two-hosts")
            sent: list[int] = []

            def answered_by() -> dict[int, int]:
                rows = conn.execute(
                    "SELECT substring(claimed_by FROM ' os=([0-9]+) ')::int, count(*) "
                    "FROM inbox WHERE id = ANY(%s) AND status = 'done' GROUP BY 1",
                    (sent,)).fetchall()
                return {int(pid): int(n) for pid, n in rows}

            try:
                deadline = time.monotonic() + 150
                while time.monotonic() < deadline and len(sent) < 15 * ROUND:
                    batch = [client.send(session, f"{QUESTION} (message {len(sent) + i})",
                                         stream=False, deadline=deadline)
                             for i in range(ROUND)]
                    sent += batch
                    for inbox_id in batch:
                        assert client.wait(inbox_id, deadline).content
                    by = answered_by()
                    if len(by) == 2 and min(by.values()) >= MIN_EACH:
                        break
            finally:
                client.close()
            by = answered_by()
            print(f"two hosts: {len(sent)} messages, answered by loop pid: {by}")
            assert set(by) == set(pids), (by, pids)  # each host answered, no one else
            assert min(by.values()) >= MIN_EACH and sum(by.values()) == len(sent)

            # answered once: the schema allows one user turn, one reply turn and one outbox
            # row per message, and each message has exactly those
            unique = {r[0] for r in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE indexdef LIKE 'CREATE UNIQUE%%' "
                "AND indexname IN ('ux_day_table_inbox_role', 'ux_outbox_inbox')")}
            assert unique == {"ux_day_table_inbox_role", "ux_outbox_inbox"}
            outbox = dict(conn.execute(
                "SELECT inbox_id, count(*) FROM outbox WHERE inbox_id = ANY(%s) GROUP BY 1",
                (sent,)).fetchall())
            turns = conn.execute(
                "SELECT role, count(*), count(DISTINCT inbox_id) FROM day_table "
                "WHERE inbox_id = ANY(%s) GROUP BY role ORDER BY role", (sent,)).fetchall()
            assert outbox == dict.fromkeys(sent, 1)
            assert turns == [("assistant", len(sent), len(sent)), ("user", len(sent), len(sent))]

            # both hosts recalled from the one cortex in the object store
            cortex_by = dict(conn.execute(
                "SELECT substring(i.claimed_by FROM ' os=([0-9]+) ')::int, count(*) "
                "FROM recall_log r JOIN day_table d ON d.entry_id = r.entry_id "
                "JOIN inbox i ON i.id = d.inbox_id "
                "WHERE i.id = ANY(%s) AND r.items @> %s::jsonb GROUP BY 1",
                (sent, f'[{{"id": "cortex:{block_id}"}}]')).fetchall())
            assert set(cortex_by) == set(pids), cortex_by
        finally:
            codes = [h.stop() for h in hosts]
        assert codes == [0, 0], [h.log.read_text()[-2000:] for h in hosts]
        # each host kept its own data directory, and no cortex there: it is in the bucket
        assert all(not (h.data / "cortex").exists() for h in hosts)
