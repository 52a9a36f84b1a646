"""The proactive recall's item cooldown (seed 002 §1 "don't inject the same connection
twice in 10 minutes") counts what was shown, or is waiting for a prompt that will show
it; never a thought nothing will read (issue 42 item 5)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent.config import Settings
from agent.runtime import Runtime
from agent.services.access import hook, introspect
from agent.services.access.transcripts import claude_session
from agent.services.records.sessions import ensure_session, ensure_user
from tests.conftest import make_session

QUESTION = "When does my passport expire?"


@pytest.fixture
def fast(settings: Settings) -> Settings:
    for role in ("system1", "system2", "consolidation"):
        settings.llm.roles[role] = "heuristic"
    return settings


def _remember_passport(conn: Any, fast: Settings) -> None:
    old = make_session(conn, "kim")
    user = conn.execute("SELECT user_id FROM sessions WHERE session_id = %s", (old,)).fetchone()
    introspect.remember(conn, Runtime(fast).cognition(), old, user[0],
                        "My passport expires in March 2027.")


def _statuses(conn: Any, session: Any) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT status FROM thoughts WHERE kind = 'proactive_recall' AND session_id = %s "
        "ORDER BY created_at, status", (session,))]


def test_an_unread_dmn_thought_does_not_hold_the_hooks_cooldown(fast: Settings,
                                                                 conn: Any) -> None:
    """The idle DMN's thought for a `claude:` session stays 'new' (the hook reads no stored
    thought); it must not keep the hook from showing the item (fails before the fix)."""
    _remember_passport(conn, fast)
    dmn = Runtime(fast).dmn()
    now = datetime.now(UTC)
    with conn.transaction():
        sid = ensure_session(conn, ensure_user(conn, "kim"), claude_session("s-42"),
                             channel="import")
        # what the DMN's tick writes for a watch-imported task-completion turn
        written = dmn._recall_for(conn, None, sid, QUESTION, ["task_completion"], now)
    assert len(written) == 1 and "March 2027" in written[0]["content"]
    assert _statuses(conn, sid) == ["new"]

    shown = hook.prompt_recall(conn, dmn, "kim", QUESTION, "s-42", now=now)
    assert len(shown) == 1 and "March 2027" in shown[0]["content"]
    # the hook printed it: its thought is stored as shown, and that holds the cooldown
    assert sorted(_statuses(conn, sid)) == ["injected", "new"]
    assert hook.prompt_recall(conn, dmn, "kim", QUESTION, "s-42", now=now) == []


def test_a_pending_thought_of_a_cogd_session_still_holds_the_cooldown(fast: Settings,
                                                                     conn: Any) -> None:
    """In a session cogd answers, a 'new' thought goes into the next prompt: writing the
    same item again before then would show it twice."""
    _remember_passport(conn, fast)
    dmn = Runtime(fast).dmn()
    sid = make_session(conn, "kim")
    now = datetime.now(UTC)
    with conn.transaction():
        first = dmn._recall_for(conn, None, sid, QUESTION, ["topic_shift"], now)
    with conn.transaction():
        again = dmn._recall_for(conn, None, sid, QUESTION, ["topic_shift"], now)
    assert len(first) == 1 and again == []
    assert _statuses(conn, sid) == ["new"]
