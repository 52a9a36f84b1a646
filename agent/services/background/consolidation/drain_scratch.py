"""Pending scratch rows through the exit gate (seed 003 §Consolidation): consolidation's
verdict on each is final."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.services.background.consolidation.context import PassContext

NAME = "drain_scratch"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Pending scratch rows through the exit gate; consolidation's verdict is final."""
    from agent.services.records.identity import load_goals, load_traits

    rows = conn.execute(
        query("consolidation_scratch_pending")
    ).fetchall()
    if not rows:
        return None
    values = [t.description or t.name for t in load_traits(conn) if not t.is_boundary]
    actions: Counter[str] = Counter()
    for sid, entry_id, role, content, session_id, user_id in rows:
        if ctx.should_stop():
            break
        if entry_id is None:  # its turn left the day table (covered by a block)
            conn.execute(query("consolidation_scratch_drop"), (sid,))
            actions["turn_gone"] += 1
            continue
        # relevance to the values and the goals of the turn's user (never another's)
        ctx.relevance.set_targets(
            values + [g.description or g.name for g in load_goals(conn, user_id)])
        outcome = ctx.rollover.judge(conn, entry_id, role, content, session_id, user_id)
        actions[outcome.action] += 1
        if outcome.action == "buffer":
            conn.execute(
                query("consolidation_scratch_drop_attempt"), (sid,))
    if not actions:
        return None
    return {"inputs": {"scratch_ids": [r[0] for r in rows]},
            "outputs": {"actions": dict(actions)}}
