"""The proactive recall's item cooldown (seed 002 §1 "don't inject the same connection
twice in 10 minutes") counts what was shown, or is waiting for a prompt that will show
it (the loop's next prompt, or `cogd hook`'s in a `claude:` session); never a thought that
went nowhere (issue 42 item 5)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agent.config import Settings
from agent.runtime import Runtime
from agent.services.access import introspect
from agent.services.access.transcripts import claude_session
from agent.services.records.sessions import ensure_session, ensure_user
from tests.conftest import heuristic_roles, make_session, user_of

QUESTION = "When does my passport expire?"


@pytest.fixture
def fast(settings: Settings) -> Settings:
    heuristic_roles(settings)
    return settings


def _remember_passport(conn: Any, fast: Settings) -> None:
    old = make_session(conn, "kim")
    user = user_of(conn, old)
    introspect.remember(conn, Runtime(fast).cognition(), old, user,
                        "My passport expires in March 2027.")


def _statuses(conn: Any, session: Any) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT status FROM thoughts WHERE kind = 'proactive_recall' AND session_id = %s "
        "ORDER BY created_at, status", (session,))]


def test_the_dmn_thought_of_a_claude_session_is_printed_by_the_hook_once(
        fast: Settings, conn: Any) -> None:
    """The idle DMN's thought for a `claude:` session waits for the hook's next prompt,
    which prints it (and marks it shown) and does not recall the same item again; a
    thought that went nowhere ('expired') holds nothing: the hook recalls the item."""
    _remember_passport(conn, fast)
    rt = Runtime(fast)
    dmn, prompt_hook = rt.dmn(), rt.prompt_hook()
    now = datetime.now(UTC)
    with conn.transaction():
        sid = ensure_session(conn, ensure_user(conn, "kim"), claude_session("s-42"),
                             channel="import")
        # what the DMN's tick writes for a watch-imported task-completion turn
        written = dmn._recall_for(conn, None, sid, QUESTION, ["task_completion"], now)
    assert len(written) == 1 and "March 2027" in written[0]["content"]
    assert _statuses(conn, sid) == ["new"]

    shown = prompt_hook.prompt(conn, "kim", QUESTION, "s-42", now=now)
    passport = [i for i in shown if "March 2027" in i["content"]]
    assert [(i["piece"], i["thought_id"]) for i in passport] == [
        ("dmn", written[0]["thought_id"])]
    assert _status(conn, written[0]["thought_id"]) == "injected"
    again = prompt_hook.prompt(conn, "kim", QUESTION, "s-42", now=now)
    assert not [i for i in again if "March 2027" in i["content"]]

    with conn.transaction():  # another session: the DMN's thought expires unread
        other = ensure_session(conn, ensure_user(conn, "kim"), claude_session("s-43"),
                               channel="import")
        stale = dmn._recall_for(conn, None, other, QUESTION, ["task_completion"], now)
        conn.execute("UPDATE thoughts SET status = 'expired' WHERE thought_id = %s",
                     (stale[0]["thought_id"],))
    shown = prompt_hook.prompt(conn, "kim", QUESTION, "s-43", now=now)
    assert [i["piece"] for i in shown if "March 2027" in i["content"]] == ["recall"]


def _status(conn: Any, thought_id: str) -> str:
    row = conn.execute("SELECT status FROM thoughts WHERE thought_id = %s",
                       (thought_id,)).fetchone()
    return str(row[0])


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
