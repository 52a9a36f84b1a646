"""Continuation notes for the sessions gone quiet (agent/services/reach/handoff.py)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import psycopg

from agent.services.background.consolidation.context import PassContext
from agent.services.background.consolidation.state import get_state, set_state

NAME = "continuation"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime
        ) -> dict[str, Any] | None:
    """Continuation notes for the sessions quiet for [context] session_quiet_minutes
    whose note is missing or older than their last turn (agent/services/reach/handoff.py)."""
    quiet = timedelta(minutes=ctx.config.session_quiet_minutes)
    since = get_state(conn, "consolidation.continuation").get("scanned_to")
    written, watermark = ctx.notes.refresh_quiet(
        conn, now, quiet, datetime.fromisoformat(since) if since else None)
    set_state(conn, "consolidation.continuation", {"scanned_to": watermark.isoformat()})
    return {"outputs": {"notes": written}} if written else None
