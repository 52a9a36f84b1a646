"""Principles (seed 000 §10.4), agent/services/thinking/models_principles.py."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent.services.background.consolidation.context import PassContext
from agent.services.background.consolidation.state import get_state, set_state

NAME = "principles"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime
        ) -> dict[str, Any] | None:
    """Principles (seed 000 §10.4): 3+ agreeing corrections or confident models
    crystallise one; identity-changing ones become Layer 0 proposals."""
    result, state = ctx.principles_op.run(
        conn, now, get_state(conn, "consolidation.principles"))
    set_state(conn, "consolidation.principles", state)
    return result
