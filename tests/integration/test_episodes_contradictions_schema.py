"""Revision 0025's invariants on a real Postgres (issue 42 items 3-4): a contradiction is
resolved once (a second resolution row, even one that skips the service, is refused by
the unique key), a resolution supersedes at least one memory, an episode ends after it
starts, a milestone key is recorded once per user and names no turn that is gone."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from agent.db.queries import query


def _pair(conn: psycopg.Connection[Any]) -> tuple[Any, Any, int]:
    uid = conn.execute("INSERT INTO users (handle) VALUES ('zoe') RETURNING user_id"
                       ).fetchone()[0]  # type: ignore[index]
    a, b = (conn.execute("INSERT INTO memories (memory_type, content, user_id) VALUES "
                         "('fact', %s, %s) RETURNING memory_id", (text, uid)).fetchone()[0]  # type: ignore[index]
            for text in ("I live in Oslo.", "I live in Bergen."))
    conn.execute(query("consolidation_link"), (b, a, "contradicts", 0.7, json.dumps({})))
    link = conn.execute("SELECT id FROM memory_links WHERE link_type = 'contradicts'"
                        ).fetchone()[0]  # type: ignore[index]
    return uid, (a, b), link


def test_a_contradiction_is_resolved_once(conn: psycopg.Connection[Any]) -> None:
    uid, (a, b), link = _pair(conn)
    row = {"link_id": link, "user_id": uid, "action": "keep_b", "kept": b,
           "superseded": [a], "how": "test", "actor": "test"}
    conn.execute(query("contradictions_insert_resolution"), row)
    with pytest.raises(psycopg.errors.UniqueViolation,
                       match="uq_contradiction_resolutions_link"):
        conn.execute(query("contradictions_insert_resolution"), dict(row, action="keep_a",
                                                                     kept=a, superseded=[b]))
    with pytest.raises(psycopg.errors.CheckViolation,
                       match="ck_contradiction_resolutions_superseded"):
        conn.execute("INSERT INTO contradiction_resolutions (link_id, action, kept_id, "
                     "superseded, how, actor) VALUES (%s, 'merge', %s, '{}', 'x', 'x')",
                     (link, a))
    assert conn.execute("SELECT count(*) FROM contradiction_resolutions").fetchone() == (1,)


def test_episode_rows_keep_their_invariants(conn: psycopg.Connection[Any]) -> None:
    uid = conn.execute("INSERT INTO users (handle) VALUES ('yan') RETURNING user_id"
                       ).fetchone()[0]  # type: ignore[index]
    at = datetime(2026, 10, 3, 18, tzinfo=UTC)
    ep = {"episode_id": str(uuid.uuid4()), "user_id": uid, "session_ids": [], "start": at,
          "end": at, "title": "t", "titled_by": "test", "terms": [], "entries": [],
          "detector": "test", "run_id": None}
    with pytest.raises(psycopg.errors.CheckViolation, match="ck_episodes_span"):
        conn.execute(query("timeline_insert_episode"),
                     dict(ep, start=at.replace(hour=19)))
    conn.execute(query("timeline_insert_episode"), ep)
    mark = {"episode_id": ep["episode_id"], "user_id": uid, "kind": "first_mention",
            "key": "oslo", "content": "first mention of Oslo", "at": at, "importance": 0.6,
            "entry_id": str(uuid.uuid4()), "detector": "test"}
    assert conn.execute(query("timeline_insert_milestone"), mark).rowcount == 1
    # a later first mention of the same name is not a first mention: nothing is written
    assert conn.execute(query("timeline_insert_milestone"), mark).rowcount == 0
    with pytest.raises(psycopg.errors.CheckViolation, match="ck_milestones_kind"):
        conn.execute(query("timeline_insert_milestone"), dict(mark, kind="rumour", key="x"))
    # its turn is gone (a uuid no turn has): the milestone names none
    assert conn.execute("SELECT source_entry_id FROM milestones").fetchall() == [(None,)]
