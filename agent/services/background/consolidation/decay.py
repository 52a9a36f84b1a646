"""Unused memories lose importance (once per period); below the floor they are archived
(still searchable). Decay reads written_at, never a client's back-dated created_at."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.services.background.consolidation.context import PassContext

NAME = "decay"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Unused memories lose importance (once per period); below the floor: archived."""
    rows = conn.execute(
        query("consolidation_decay_candidates"),
        (now, int(ctx.cfg.decay_after_days)),
    ).fetchall()
    decayed: list[str] = []
    archived: list[str] = []
    for mid, imp, access, touched, kind, last in rows:
        last_dt = datetime.fromisoformat(last) if last else None
        if not rules.should_decay(imp, access, touched, kind, last_dt, now, ctx.cfg):
            continue
        new = imp * ctx.cfg.decay_factor
        status = "archived" if new < ctx.cfg.archive_below_importance else "active"
        conn.execute(
            query("consolidation_memory_decay"), (new, status, now.isoformat(), mid))
        (archived if status == "archived" else decayed).append(str(mid))
    if not decayed and not archived:
        return None
    return {"inputs": {"candidates": len(rows)},
            "outputs": {"decayed": decayed, "archived": archived}}
