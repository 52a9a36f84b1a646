"""Reasoning trails from the exit gate's decision memories (seed 000 §8.2)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent.services.background.consolidation.context import PassContext

NAME = "decisions"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Reasoning trails from the exit gate's decision memories, and trails linked to
    the decision memory of their turn (seed 000 §8.2; agent/services/thinking/decisions.py)."""
    return ctx.decisions.from_memories(conn)
