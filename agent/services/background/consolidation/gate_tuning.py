"""The exit gate's persist threshold, tuned: drops later needed lower it, unused persists
raise it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.services.background.consolidation.context import PassContext
from agent.services.background.consolidation.state import get_state, set_state

NAME = "gate_tuning"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Drops later needed lower the persist threshold; unused persists raise it."""
    state = get_state(conn, "gate_tuning")
    recall_since = int(state.get("recall_log_id", 0))
    persist_since = state.get("persists_to", "-infinity")
    needed = conn.execute(
        query("consolidation_scratched_then_recalled"), (recall_since,)).fetchone()
    horizon = now.timestamp() - 30 * 86400
    evaluated = conn.execute(
        query("consolidation_persisted_unused"), (persist_since, horizon)).fetchone()
    top = conn.execute(query("consolidation_recall_log_head")).fetchone()
    n_needed = int(needed[0]) if needed else 0
    n_eval, n_unused = (int(evaluated[0]), int(evaluated[1])) if evaluated else (0, 0)
    current = float(state.get("persist_threshold", ctx.exit_cfg.persist_threshold))
    new = rules.tuned_threshold(current, n_needed, n_unused, n_eval, rules.GateTuning())
    new_state = {**state, "recall_log_id": int(top[0]) if top else recall_since,
                 "persists_to": datetime.fromtimestamp(horizon, UTC).isoformat(),
                 "persist_threshold": new,
                 "stochastic_floor": ctx.exit_cfg.stochastic_keep_probability}
    if new == current:
        if n_needed or n_eval:
            set_state(conn, "gate_tuning", new_state)
        return None
    set_state(conn, "gate_tuning", new_state)
    return {"inputs": {"needed_drops": n_needed, "persists_evaluated": n_eval,
                       "never_retrieved": n_unused},
            "outputs": {"persist_threshold": [current, new]}}
