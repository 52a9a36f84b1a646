"""The contextual index entries (lexicon) of memories and blocks written since
(agent/services/memory/indexing.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent.services.background.consolidation.context import PassContext
from agent.services.memory.indexing import index_pending

NAME = "index"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """The contextual index entries (lexicon) of memories and blocks written since
    (agent/services/memory/indexing.py); their writers' own transactions stay short."""
    done = index_pending(conn, ctx.indexer).indexed
    if not any(done.values()):
        return None
    return {"inputs": {}, "outputs": {"indexed": done}}
