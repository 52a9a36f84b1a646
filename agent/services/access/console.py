"""The web console's rows (`cogd serve` /ui, agent/commands/console; issue 44).

Console sessions (revision 0027): a login with an API token opens one; the cookie holds
its secret (only the SHA-256 is stored) and every form carries its CSRF secret. A
session ends at logout, when it expires, or when its token is revoked.

The pages' reads that the HTTP API has no route for: the user's turns and turn-less
memories by day (the timeline), the memory made from a turn, a memory's use and decay,
and its links. Each names the caller's user; recall, a memory, its `why` and forget are MemoryAPI's
(agent/services/access/memory_api.py), the same calls as /v1.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from agent.db import audit
from agent.db.queries import query
from agent.services.access.tokens import Caller

SECRET_BYTES = 32  # 256 random bits, as an API token
MAX_USER_AGENT = 300
MAX_LINKS = 100  # a memory page lists its newest links; the count says how many in all


@dataclass(frozen=True)
class ConsoleSession:
    """A live console session: the caller its token stands for and the CSRF secret its
    forms carry."""
    session_id: Any
    caller: Caller
    csrf: str
    expires_at: datetime


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", errors="replace")).hexdigest()


def open_session(conn: psycopg.Connection[Any], caller: Caller, seconds: int,
                 user_agent: str = "") -> tuple[str, ConsoleSession]:
    """A new session for the caller of a live token: (the cookie's secret, the session).
    Audit-logged (never the secret)."""
    secret = secrets.token_urlsafe(SECRET_BYTES)
    csrf = secrets.token_urlsafe(SECRET_BYTES)
    with conn.transaction():
        row = conn.execute(query("console_session_insert"), {
            "secret_hash": secret_hash(secret), "token_id": caller.token_id,
            "user_id": caller.user_id, "csrf": csrf, "seconds": seconds,
            "user_agent": user_agent[:MAX_USER_AGENT]}).fetchone()
        assert row is not None
        audit.append(conn, f"console:{caller.token_id}", "console_login",
                     f"console_sessions:{row[0]}", {"user": caller.handle})
    return secret, ConsoleSession(row[0], caller, csrf, row[1])


def find_session(conn: psycopg.Connection[Any], secret: str) -> ConsoleSession | None:
    """The live session of a cookie's secret; None when there is none (unknown, ended,
    expired, or its token revoked)."""
    if not secret or len(secret) > 200:
        return None
    row = conn.execute(query("console_session_lookup"),
                       {"secret_hash": secret_hash(secret)}).fetchone()
    if row is None:
        return None
    return ConsoleSession(row[0], Caller(row[1], row[2], row[3], bool(row[4])), row[5], row[6])


def end_session(conn: psycopg.Connection[Any], session: ConsoleSession,
                how: str = "logout") -> bool:
    """End a session (logout); False when it had ended already."""
    with conn.transaction():
        done = conn.execute(query("console_session_end"), {
            "session_id": session.session_id, "how": how}).fetchone() is not None
        if done:
            audit.append(conn, f"console:{session.caller.token_id}", "console_logout",
                         f"console_sessions:{session.session_id}",
                         {"user": session.caller.handle, "how": how})
    return done


def timeline(conn: psycopg.Connection[Any], user_id: Any, before: tuple[Any, Any] | None,
             limit: int) -> list[dict[str, Any]]:
    """The user's history, newest first: `limit` entries after the cursor `before`
    ((created_at, id) of the last entry of the previous page; None: the newest). An entry
    is a turn (`kind` 'turn', with the memory made from it) or a memory without a turn
    in day_table (`kind` 'memory': an insight, or one whose turn the night cycle's
    cleanup removed)."""
    at, ident = before if before is not None else (None, None)
    rows = conn.execute(query("console_timeline"), {
        "user_id": user_id, "before": at, "before_id": ident, "limit": limit}).fetchall()
    return [{"kind": r[0], "id": str(r[1]),
             "session_id": None if r[2] is None else str(r[2]), "channel": r[3],
             "session_started_at": r[4], "session_external_id": r[5], "role": r[6],
             "speaker": r[7], "content": r[8], "created_at": r[9], "message_type": r[10],
             "memory_id": None if r[11] is None else str(r[11]), "status": r[12]}
            for r in rows]


def memories_of_turns(conn: psycopg.Connection[Any], user_id: Any,
                      entry_ids: list[str]) -> dict[str, str]:
    """entry_id -> the user's memory made from that turn (an active one first)."""
    if not entry_ids:
        return {}
    return {str(r[0]): str(r[1]) for r in conn.execute(query("console_memories_of_turns"), {
        "user_id": user_id, "entry_ids": entry_ids})}


def own_memories(conn: psycopg.Connection[Any], user_id: Any, ids: list[str]) -> set[str]:
    """Which of these memory ids are the user's own (those have a memory page; a memory of
    no user is recalled, but is no user's to open or forget)."""
    if not ids:
        return set()
    return {str(r[0]) for r in conn.execute(query("console_own_memories"), {
        "ids": ids, "user_id": user_id})}


def memory_detail(conn: psycopg.Connection[Any], memory_id: Any, user_id: Any,
                  max_links: int = MAX_LINKS) -> dict[str, Any] | None:
    """A memory's use, decay and evidence, and its links both ways (the other end's text
    only when it is the user's or of no user; `own`: the user's, with a page of its own):
    the newest `max_links`, and `link_count` all of them; None when the memory is not the
    user's."""
    row = conn.execute(query("console_memory_detail"),
                       {"memory_id": memory_id, "user_id": user_id}).fetchone()
    if row is None:
        return None
    links = [{"type": r[0], "strength": r[1], "created_at": r[2], "direction": r[3],
              "memory_id": str(r[4]), "memory_type": r[5], "status": r[6], "content": r[7],
              "own": bool(r[8])}
             for r in conn.execute(query("console_memory_links"), {
                 "memory_id": memory_id, "user_id": user_id, "limit": max_links})]
    count = len(links)
    if count == max_links:
        found = conn.execute(query("console_memory_links_count"),
                             {"memory_id": memory_id}).fetchone()
        count = int(found[0]) if found else count
    return {"access_count": row[0], "last_accessed": row[1], "written_at": row[2],
            "decayed_at": row[3], "landmark": bool(row[4]), "confidence": row[5],
            "evidence_count": row[6], "updated_at": row[7], "emotion": row[8],
            "links": links, "link_count": count}
