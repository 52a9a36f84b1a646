"""Cognitive models (seed 000 §10.2, §10.7), agent/services/thinking/models_principles.py."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent.services.background.consolidation.context import PassContext
from agent.services.background.consolidation.state import get_state, set_state

NAME = "models"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Cognitive models (seed 000 §10.2, §10.7): built from recurring regularities,
    weighed against later memories, decayed when unchecked (models_principles.py)."""
    result, state = ctx.models_op.run(
        conn, now, get_state(conn, "consolidation.models"))
    set_state(conn, "consolidation.models", state)
    return result
