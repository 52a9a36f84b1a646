"""Sessions belong to one user: a key or id another user's session holds is refused."""

from __future__ import annotations

from typing import Any

import pytest

from agent.errors import InputError
from agent.services.sessions import ensure_session, ensure_user


def test_a_session_key_or_id_of_another_user_is_refused_not_shared(conn: Any) -> None:
    alice, bob = ensure_user(conn, "alice"), ensure_user(conn, "bob")
    keyed = ensure_session(conn, alice, "claude:abc", channel="import")
    assert ensure_session(conn, alice, "claude:abc", channel="import") == keyed  # found again
    fresh = ensure_session(conn, alice)
    assert fresh != keyed and ensure_session(conn, alice, str(fresh)) == fresh
    for key in ("claude:abc", str(keyed), str(fresh)):
        with pytest.raises(InputError, match="belongs to another user"):
            ensure_session(conn, bob, key)
    owners = conn.execute("SELECT user_id, count(*) FROM sessions GROUP BY user_id").fetchall()
    assert owners == [(alice, 2)]  # bob got no session and took none
