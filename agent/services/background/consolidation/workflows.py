"""Recurring multi-step procedures, and the open offers settled (seed 000 §10.5)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent.services.background.consolidation.context import PassContext
from agent.services.background.consolidation.state import get_state, set_state

NAME = "workflows"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Recurring multi-step procedures in the sessions with new user turns (the named
    sequence-heuristic; agent/services/reach/workflows.py), and the open offers whose
    session completed or skipped them (seed 000 §10.5)."""
    from agent.services.reach.workflows import STATE_KEY

    since = get_state(conn, STATE_KEY).get("scanned_to")
    found, watermark = ctx.workflows.detect_since(
        conn, now, datetime.fromisoformat(since) if since else None)
    if watermark is not None:
        set_state(conn, STATE_KEY, {"scanned_to": watermark.isoformat()})
    settled = ctx.workflows.settle_open(conn, now)
    if not found and not settled:
        return None
    return {"outputs": {"workflows": found, "offers": settled}}
