"""Stage 7, migration to the cortex (seed 001 §2.3, §5.3, §5.5.1, §6.4).

A block migrates when its coherence gain reaches the threshold, when it is 7 days old,
when it is marked for long-term retention (the user asked to remember something in it),
or when its user's tier keeps no more holographic cycles in the hippocampus (normal:
after the raw cycle; meso: +2 cycles; elder: +6). In the cortex the margins are trimmed
and the summaries condensed, the live zones stay verbatim and both vectors keep the
precision the hippocampus stored. The hippocampus row stays (migrated_at is set): nothing
is deleted. Upserts by block_id, so a crash between the two stores is repaired by a re-run.
migrated_at is set once every cortex write has succeeded, in the stage's transaction: a
cortex that refuses a write (read-only, full) leaves no block marked migrated.

Then the archive sweep: cortex blocks untouched for archive_after_days move to the
archive table, which stays searchable.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

from agent.cortex.lance import BLOCKS
from agent.db.queries import query
from agent.domain.tables import need
from night_cycle.context import RunContext
from night_cycle.hooks import fault_hook
from night_cycle.prose import cortex_text, live_text
from night_cycle.stages import StageOutput
from night_cycle.vectors import parse_vector

NAME = "cortex migration"
TRANSACTIONAL = True
BATCH = 256

def reasons(ctx: RunContext, r: Any) -> list[str]:
    cfg, ret = ctx.cfg, ctx.retention
    why = []
    if float(r[7]) >= float(need(cfg, "migration_min_coherence_gain")):
        why.append("coherence_gain")
    age = ctx.now - r[16]
    if age >= timedelta(days=float(need(cfg, "migration_min_age_days"))):
        why.append("age")
    if (r[1] or {}).get("long_term"):
        why.append("long_term")
    tier = r[22] if r[22] in ("normal", "meso", "elder") else ctx.default_tier
    keep = 1 + int(ret.get(f"{tier}_holographic_cycles", 0))
    if age >= timedelta(days=keep * float(need(ret, "cycle_days"))):
        why.append(f"tier_{tier}")
    return why


def cortex_row(ctx: RunContext, r: Any, now: datetime) -> dict[str, Any]:
    prose = r[1] or {}
    margin = int(need(ctx.cfg, "cortex_margin_chars"))
    summary = int(need(ctx.cfg, "cortex_summary_chars"))
    uni, nat = parse_vector(r[2]), parse_vector(r[3])
    return {
        "block_id": r[0], "kind": "metablock" if "sequence" in prose else "block",
        "session_id": r[20], "user_id": r[21], "user_tier": r[22], "run_id": r[23],
        "prose_text": cortex_text(prose, margin, summary), "live_zones_text": live_text(prose),
        "prose": json.dumps(prose),
        "universal": None if uni is None else uni.tolist(),
        "native": None if nat is None else nat.tolist(), "native_model": r[4],
        "flux_metrics": json.dumps(r[5]), "salience_scores": json.dumps(r[6]),
        "composite": float((r[6] or {}).get("composite", 0.0)), "coherence_gain": float(r[7]),
        "ties_merge_weight": float(r[8]), "citations": json.dumps(r[9] or []),
        "preoccupation_centroid_id": r[10], "parent_metablock_id": r[11],
        "continues_from": r[12], "continued_by": r[13], "session_continuity_flag": bool(r[14]),
        "arc_start_time": r[15], "arc_end_time": r[16], "created_at": r[17], "migrated_at": now,
        "last_accessed": r[18], "vector_history": json.dumps(r[19] or []),
    }


def run(ctx: RunContext, _inputs: Any = None) -> StageOutput:
    rows = ctx.conn.execute(query("night_migration_pending"), (ctx.default_tier,)).fetchall()
    due = [(r, why) for r in rows if (why := reasons(ctx, r))]
    ctx.progress.stage(7, NAME, len(due))
    cortex = ctx.cortex()
    by_reason: Counter[str] = Counter()
    for start in range(0, len(due), BATCH):
        part = due[start:start + BATCH]
        cortex.upsert(BLOCKS, [cortex_row(ctx, r, ctx.now) for r, _ in part], "block_id")
        if start == 0:
            fault_hook(7, "mid")  # after a cortex write, before the hippocampus knows
        for _, why in part:
            by_reason.update(why)
        ctx.progress.advance(len(part))
    cutoff = ctx.now - timedelta(days=float(need(ctx.cfg, "archive_after_days")))
    archived = cortex.archive_untouched(cutoff, ctx.now)
    upkeep = cortex.maintain(int(need(ctx.cfg, "cortex_index_min_rows")))
    # the hippocampus learns of the migration last (row locks held only until the checkpoint)
    ctx.conn.execute(query("night_migration_mark_migrated"),
                     (ctx.now, [r[0] for r, _ in due]))
    summary = {"migrated": len(due), "stayed_in_hippocampus": len(rows) - len(due),
               "by_reason": dict(by_reason), "archived": len(archived),
               "cortex": cortex.counts(), **upkeep}
    return StageOutput(summary, None)
