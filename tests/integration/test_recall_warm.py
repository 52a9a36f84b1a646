"""Recall's warm-up (issue "Recall at a million memories"): searches from stored vectors
read memories' HNSW graph into shared_buffers, through the index and never by scanning the
table; nothing to do without memories or with [recall] warm_queries = 0; the loop
worker's warm-up (which LoopWorker.run starts in a thread) logs what it did, or that it
could not; a bad setting is refused."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
import pytest

from agent.config import Settings, load_settings
from agent.domain.recall import RecallConfig
from agent.errors import ConfigError
from agent.services.memory.recall import warm
from agent.workers.loop import LoopWorker
from tests.integration.test_recall_users import PER_USER, USERS, _load

INDEX = "ix_memories_universal_embedding_hnsw"


def index_scans(conn: psycopg.Connection[Any], name: str) -> int:
    conn.execute("SELECT pg_stat_clear_snapshot()")
    row = conn.execute("SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = %s",
                       (name,)).fetchone()
    assert row is not None
    return int(row[0])


def flush_stats(conn: psycopg.Connection[Any]) -> None:
    """This backend's counters into the shared statistics now (PostgreSQL >= 15)."""
    conn.execute("SELECT pg_stat_force_next_flush()")
    conn.execute("SELECT 1")


def test_the_warm_up_searches_memories_hnsw_index(settings: Settings,
                                                   conn: psycopg.Connection[Any]) -> None:
    cfg = RecallConfig.from_table(settings.recall)
    assert cfg.warm_queries > 0  # on by default
    assert warm(conn, cfg) == 0  # no memories yet (the planner's size reads 0)
    _load(conn, int(settings.embedding.universal_dim))
    before = index_scans(conn, INDEX)
    seq_before = conn.execute("SELECT seq_scan FROM pg_stat_user_tables "
                              "WHERE relname = 'memories'").fetchone()[0]  # type: ignore[index]
    # asked for more than a quarter of the rows: every page is sampled, so exactly this many
    searches = USERS * PER_USER // 4 + 1
    assert warm(conn, cfg, searches) == searches
    flush_stats(conn)
    assert index_scans(conn, INDEX) - before == searches  # one index scan a search
    # the sample reads pages (TABLESAMPLE), the searches the index: no scan of the table
    conn.execute("SELECT pg_stat_clear_snapshot()")
    assert conn.execute("SELECT seq_scan FROM pg_stat_user_tables WHERE relname = "
                        "'memories'").fetchone()[0] == seq_before  # type: ignore[index]
    # the settings were the transaction's only
    assert conn.execute("SHOW enable_seqscan").fetchone() == ("on",)
    assert warm(conn, cfg, 0) == 0


def test_the_loop_workers_warm_up_logs_what_it_did(settings: Settings, db_url: str,
                                                     conn: psycopg.Connection[Any],
                                                     caplog: pytest.LogCaptureFixture) -> None:
    _load(conn, int(settings.embedding.universal_dim))
    worker = LoopWorker(settings, db_url)
    with caplog.at_level(logging.INFO, logger="agent.workers.loop"):
        worker.warm()
    done = [r.getMessage() for r in caplog.records if "recall warm-up" in r.getMessage()]
    assert len(done) == 1 and done[0].startswith(
        f"loop: recall warm-up: {min(settings.recall['warm_queries'], USERS * PER_USER)} "
        "searches")
    # a server that cannot be reached costs the warm-up only, with a warning
    caplog.clear()
    LoopWorker(settings, "postgresql://nobody@127.0.0.1:1/none").warm()
    assert any("recall warm-up skipped" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records)


def test_a_negative_warm_up_is_refused(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COGD_RECALL__WARM_QUERIES", "-1")
    with pytest.raises(ConfigError, match="warm_queries"):
        load_settings(data_dir=tmp_path / "data")
