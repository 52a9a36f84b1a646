"""The user profile (issue 42 item 1; seed 000 §5.4.5), agent/services/memory/profile.py:
the users' own statements read into claims with sources."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent.services.background.consolidation.context import PassContext
from agent.services.background.consolidation.state import get_state, set_state

NAME = "profile"
KEY = "consolidation.profile"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """The users' own turns written since the last pass (at most [context]
    profile_turns_per_pass): each one's facts as profile claims, a newer statement
    superseding the current claim of its slot (never deleted)."""
    state = get_state(conn, KEY)
    after = state.get("scanned_to")
    written, mark = ctx.profile.scan(conn, datetime.fromisoformat(after) if after else None,
                                     state.get("scanned_id"))
    if mark is not None:
        set_state(conn, KEY, {"scanned_to": mark[0].isoformat(), "scanned_id": mark[1]})
    return {"outputs": {"claims": written}} if written else None
