"""Plans, promises, reminders and unfinished work found in user turns, carried forward."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.services.background.consolidation.context import PassContext
from agent.services.background.consolidation.state import set_state

NAME = "intentions"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Find plans, promises, reminders and unfinished work; carry them forward."""
    found = []
    for entry, session, user, content, at in conn.execute(
        query("consolidation_user_turns_since")).fetchall():
        kind = rules.intention_kind(content)
        if kind:
            conn.execute(
                query("consolidation_intention_insert"),
                {"user": user, "session": session, "entry": entry, "kind": kind,
                 "content": content[:2000], "at": at})
            found.append({"entry_id": str(entry), "kind": kind})
    latest = conn.execute(query("consolidation_last_user_turn_at")
                          ).fetchone()
    if latest and latest[0]:
        set_state(conn, "consolidation.intentions", {"scanned_to": latest[0].isoformat()})
    after = ctx.config.urgency_decay_after_days
    per_day = ctx.config.urgency_decay_per_day
    carried = []
    for iid, created, count, urgency, _last_session, new_count, newest in conn.execute(
        query("consolidation_open_intentions")).fetchall():
        new_urgency = round(rules.intention_urgency(0.5, created, now, after, per_day), 4)
        if new_count != count or abs(new_urgency - urgency) > 1e-9:
            conn.execute(
                query("consolidation_intention_carry"),
                (new_count, new_urgency, newest, iid))
            carried.append({"intention_id": str(iid), "carried": new_count,
                            "urgency": new_urgency})
    if not found and not carried:
        return None
    return {"outputs": {"new": found, "carried": carried, "detector": "keyword-heuristic"}}
