"""Users and sessions: found or created by handle / external id."""

from __future__ import annotations

import uuid
from typing import Any

import psycopg

from agent.db.queries import query
from agent.errors import InputError

USER_TIERS = ("normal", "meso", "elder")
# an external session key is a name, not a document: at most this many characters (its
# unique index holds 2,704 bytes a row; 500 characters of 4-byte UTF-8 fit), no NUL
MAX_SESSION_KEY = 500


def ensure_user(conn: psycopg.Connection[Any], handle: str, tier: str | None = None) -> Any:
    handle = handle.strip()
    if not handle:
        raise InputError("a user handle cannot be empty")
    if tier is not None and tier not in USER_TIERS:
        raise InputError(f"unknown user tier {tier!r}; valid tiers: {', '.join(USER_TIERS)}")
    if tier is None:  # the common case (every API call, hook, import line): a read
        found = conn.execute(query("sessions_user_by_handle"), (handle,)).fetchone()
        if found is not None:
            return found[0]
    row = conn.execute(
        query("sessions_user_upsert"),
        (handle, tier, tier),
    ).fetchone()
    assert row is not None
    return row[0]


def ensure_session(
    conn: psycopg.Connection[Any],
    user_id: Any,
    session: str | None = None,
    channel: str = "cli",
) -> Any:
    """A session of `user_id` by uuid or external key; a new one when `session` is None.
    External keys are per user (revision 0019): another user's session of the same key is
    neither found nor in the way. A session uuid that belongs to another user is refused
    (InputError), never shared: its turns would be recalled for that user."""
    if session:
        check_session_key(session)
        try:
            sid = uuid.UUID(session)
        except ValueError:
            sid = None
        if sid is not None:
            row = conn.execute(
                query("sessions_session_exists"), (sid,)
            ).fetchone()
            if row:
                return _own(row, session, user_id)
        row = conn.execute(
            query("sessions_session_upsert_external"),
            (user_id, channel, session),
        ).fetchone()
        assert row is not None
        return _own(row, session, user_id)
    row = conn.execute(query("sessions_session_insert"), (user_id, channel)).fetchone()
    assert row is not None
    return row[0]


def check_session_key(session: str) -> str:
    """A session key Postgres can index (InputError otherwise: a 400 over HTTP, a bad
    line in an import, never a database error)."""
    if len(session) > MAX_SESSION_KEY:
        raise InputError(f"the session key is {len(session)} characters; at most "
                         f"{MAX_SESSION_KEY}")
    if "\x00" in session or any(0xD800 <= ord(c) <= 0xDFFF for c in session):
        raise InputError("the session key has a NUL or an unpaired surrogate: use text")
    return session


def _own(row: Any, session: str, user_id: Any) -> Any:
    if str(row[1]) != str(user_id):
        raise InputError(f"session {session!r} belongs to another user")
    return row[0]


def user_by_handle(conn: psycopg.Connection[Any], handle: str) -> Any:
    """The user_id of an existing user, or InputError naming where handles are listed."""
    row = conn.execute(query("sessions_user_by_handle"), (handle,)).fetchone()
    if row is None:
        raise InputError(f"no user {handle!r} (handles are listed by "
                         "`select handle from users`)")
    return row[0]
