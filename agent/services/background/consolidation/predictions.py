"""Pending predictions past their deadline -> 'expired' (seed 000 §10.3)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent.services.background.consolidation.context import PassContext

NAME = "predictions"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime
        ) -> dict[str, Any] | None:
    """Pending predictions past their deadline with no settlement → 'expired'
    (seed 000 §10.3; agent/services/thinking/predictions.py)."""
    from agent.services.thinking.predictions import PredictionTracker

    expired = PredictionTracker.expire(conn, now)
    return {"outputs": {"expired": expired}} if expired else None
