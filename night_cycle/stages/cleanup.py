"""Stage 9, day-table cleanup by user tier (seed 001 §2.3, §8.3).

A day_table row is deleted only when BOTH hold: a holographic block covers it (its
entry id is in the block's flux_metrics.entry_ids, so the block holds its live zone
verbatim or its summary), and it is older than its user's retention (normal 1 cycle,
meso 3, elder 7; the user's current tier). Nothing else is deleted: rows no block covers
stay, whatever their age. Rows that referenced a deleted turn keep their own content
(foreign keys are ON DELETE SET NULL).
"""

from __future__ import annotations

from typing import Any

from agent.db.queries import query
from agent.domain.tables import need
from night_cycle.context import RunContext
from night_cycle.stages import StageOutput

NAME = "day-table cleanup"
TRANSACTIONAL = True

def run(ctx: RunContext, _inputs: Any = None) -> StageOutput:
    ret = ctx.retention
    ctx.progress.stage(9, NAME, 1)
    params = {
        "default": ctx.default_tier, "now": ctx.now, "cycle_days": int(need(ret, "cycle_days")),
        "normal": int(need(ret, "normal_cycles")), "meso": int(need(ret, "meso_cycles")),
        "elder": int(need(ret, "elder_cycles")),
    }
    deleted: dict[str, int] = {}
    for (tier,) in ctx.conn.execute(query("night_cleanup_delete"), params).fetchall():
        deleted[tier] = deleted.get(tier, 0) + 1
    row = ctx.conn.execute(query("night_cleanup_kept")).fetchone()
    covered_kept, uncovered = (int(row[0]), int(row[1])) if row else (0, 0)
    ctx.progress.advance()
    return StageOutput({
        "deleted": sum(deleted.values()), "deleted_by_tier": deleted,
        "kept_covered_within_retention": covered_kept, "kept_not_in_any_block": uncovered,
        "retention_cycles": {"normal": params["normal"], "meso": params["meso"],
                             "elder": params["elder"]},
    }, None)
