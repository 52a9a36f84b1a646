"""Sessions belong to one user: an id another user's session holds is refused; keys are
per user."""

from __future__ import annotations

from typing import Any

import pytest

from agent.errors import InputError
from agent.services.records.sessions import ensure_session, ensure_user


def test_a_session_id_of_another_user_is_refused_and_keys_are_per_user(conn: Any) -> None:
    alice, bob = ensure_user(conn, "alice"), ensure_user(conn, "bob")
    keyed = ensure_session(conn, alice, "claude:abc", channel="import")
    assert ensure_session(conn, alice, "claude:abc", channel="import") == keyed  # found again
    fresh = ensure_session(conn, alice)
    assert fresh != keyed and ensure_session(conn, alice, str(fresh)) == fresh
    for key in (str(keyed), str(fresh)):
        with pytest.raises(InputError, match="belongs to another user"):
            ensure_session(conn, bob, key)
    # a key is per user (revision 0019): bob's "claude:abc" is his own session
    bobs = ensure_session(conn, bob, "claude:abc", channel="import")
    assert bobs not in (keyed, fresh)
    owners = conn.execute("SELECT user_id, count(*) FROM sessions GROUP BY user_id "
                          "ORDER BY 2 DESC").fetchall()
    assert owners == [(alice, 2), (bob, 1)]  # bob took none of alice's
