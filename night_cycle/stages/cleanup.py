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

from agent.domain.tables import need
from night_cycle.context import RunContext
from night_cycle.stages import StageOutput

NAME = "day-table cleanup"
TRANSACTIONAL = True

DELETE = """
WITH covered AS (
    SELECT DISTINCT (jsonb_array_elements_text(b.flux_metrics->'entry_ids'))::uuid AS entry_id
    FROM holographic_blocks b
    WHERE b.session_id IN (SELECT DISTINCT session_id FROM day_table)
),
doomed AS (
    SELECT d.entry_id, coalesce(u.tier, d.user_tier, %(default)s) AS tier
    FROM day_table d
    JOIN covered c ON c.entry_id = d.entry_id
    LEFT JOIN users u ON u.user_id = d.user_id
    WHERE d.created_at < %(now)s - make_interval(days => %(cycle_days)s * (
        CASE coalesce(u.tier, d.user_tier, %(default)s)
            WHEN 'elder' THEN %(elder)s WHEN 'meso' THEN %(meso)s ELSE %(normal)s END))
)
DELETE FROM day_table d USING doomed
WHERE d.entry_id = doomed.entry_id
RETURNING doomed.tier
"""

KEPT = """
SELECT count(*) FILTER (WHERE c.entry_id IS NOT NULL), count(*) FILTER (WHERE c.entry_id IS NULL)
FROM day_table d
LEFT JOIN (SELECT DISTINCT (jsonb_array_elements_text(flux_metrics->'entry_ids'))::uuid
           AS entry_id FROM holographic_blocks) c ON c.entry_id = d.entry_id
"""


def run(ctx: RunContext, _inputs: Any = None) -> StageOutput:
    ret = ctx.retention
    ctx.progress.stage(9, NAME, 1)
    params = {
        "default": ctx.default_tier, "now": ctx.now, "cycle_days": int(need(ret, "cycle_days")),
        "normal": int(need(ret, "normal_cycles")), "meso": int(need(ret, "meso_cycles")),
        "elder": int(need(ret, "elder_cycles")),
    }
    deleted: dict[str, int] = {}
    for (tier,) in ctx.conn.execute(DELETE, params).fetchall():
        deleted[tier] = deleted.get(tier, 0) + 1
    row = ctx.conn.execute(KEPT).fetchone()
    covered_kept, uncovered = (int(row[0]), int(row[1])) if row else (0, 0)
    ctx.progress.advance()
    return StageOutput({
        "deleted": sum(deleted.values()), "deleted_by_tier": deleted,
        "kept_covered_within_retention": covered_kept, "kept_not_in_any_block": uncovered,
        "retention_cycles": {"normal": params["normal"], "meso": params["meso"],
                             "elder": params["elder"]},
    }, None)
