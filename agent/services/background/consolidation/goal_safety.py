"""Diminishing gains, the 0.92 cap, dominance and utility damping (once per cycle)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.services.background.consolidation.context import PassContext
from agent.services.background.consolidation.state import get_state, set_state

NAME = "goal_safety"


def run(ctx: PassContext, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
    """Diminishing gains, the 0.92 cap, dominance and utility damping (once per cycle)."""
    changes = []
    gain = ctx.config.evidence_gain
    goals = conn.execute(
        query("consolidation_goals_with_evidence")).fetchall()
    weights = {r[1]: float(r[2]) for r in goals}

    def set_weight(goal_id: Any, name: str, new: float, reason: str,
                   meta: dict[str, Any] | None = None) -> None:
        old = weights[name]
        new = round(new, 6)
        if abs(new - old) < 1e-9 and meta is None:
            return
        conn.execute(query("consolidation_goal_reweigh"),
                     (new, json.dumps(meta or {}), goal_id))
        conn.execute(query("consolidation_goal_history"), (goal_id, old, new, reason))
        weights[name] = new
        changes.append({"goal": name, "from": old, "to": new, "reason": reason})

    for goal_id, name, _w, _, _, meta, evidence, _user in goals:
        seen = int((meta or {}).get("evidence_seen", 0))
        if evidence is not None and int(evidence) > seen:
            step = rules.diminished_gain(gain * (int(evidence) - seen), int(evidence),
                                         ctx.safety)
            set_weight(goal_id, name, rules.capped(weights[name] + step, ctx.safety),
                       "evidence gain / log2(evidence + 1)",
                       {"evidence_seen": int(evidence)})
        elif weights[name] > ctx.safety.cap:
            set_weight(goal_id, name, ctx.safety.cap, "hard cap")
    state = get_state(conn, "consolidation.goal_damping")
    last = state.get("at")
    interval = ctx.cfg.interval_minutes * 60
    if last is None or (now - datetime.fromisoformat(last)).total_seconds() >= interval:
        damped = False
        ids = {r[1]: r[0] for r in goals}
        # dominance among the goals one prompt carries: the installation-wide ones,
        # and a user's own with them (a user's goal is damped only by that set)
        owners: dict[Any, list[str]] = {None: []}
        for r in goals:
            owners.setdefault(r[7], []).append(r[1])
        for owner, names in owners.items():
            carried = names + (owners[None] if owner is not None else [])
            for name, new in rules.dominance_damped(
                    {n: weights[n] for n in carried}, ctx.safety).items():
                if name in names:
                    set_weight(ids[name], name, new, "dominance damping (> 40 % of total)")
                    damped = True
        for goal_id, name, _, actions, useful, _, _, _ in goals:
            new_w = rules.utility_damped(weights[name], actions, useful, ctx.safety)
            if new_w is not None:
                set_weight(goal_id, name, new_w, "utility damping (< 20 % useful)")
                damped = True
        if damped:
            set_state(conn, "consolidation.goal_damping", {"at": now.isoformat()})
    return {"outputs": {"changes": changes}} if changes else None
