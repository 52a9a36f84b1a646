"""One memory of a kind per turn, by the schema (issue "Exactly-once by the schema, real
crashes, and a locked-down embedded server").

The exit gate judges each turn once (an advisory lock per turn and a check of
gate_decisions, in agent/services/conversation/rollover.py); this revision makes the result hold even if
that code is bypassed: a unique index on memories (source_entry_id, memory_type) where
source_entry_id is set. Before it is built, duplicates already present are reported:
each is logged, recorded in audit_log (`action = 'duplicate_detached'`), and every copy
but the first is detached from its turn (source_entry_id set to NULL, the turn kept in
metadata.duplicate_of_entry). No memory is deleted.

Revision ID: 0011_one_memory_per_turn
Revises: 0010_layer0_definer
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_one_memory_per_turn"
down_revision: str | None = "0010_layer0_definer"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

logger = logging.getLogger("alembic.runtime.migration")


def detach_duplicates(bind: sa.engine.Connection) -> int:
    rows = bind.execute(sa.text(
        "SELECT memory_id::text, source_entry_id::text, memory_type FROM ("
        "  SELECT memory_id, source_entry_id, memory_type, row_number() OVER ("
        "         PARTITION BY source_entry_id, memory_type ORDER BY created_at, memory_id) n"
        "  FROM memories WHERE source_entry_id IS NOT NULL) d WHERE n > 1")).fetchall()
    for memory_id, entry_id, kind in rows:
        details = {"table": "memories", "id": memory_id, "source_entry_id": entry_id,
                   "memory_type": kind}
        logger.warning("0011: memory %s duplicates the %s memory of turn %s; detached from "
                       "the turn", memory_id, kind, entry_id)
        bind.execute(sa.text(
            "INSERT INTO audit_log (actor, action, target, details) "
            "VALUES ('migration 0011', 'duplicate_detached', :target, CAST(:details AS jsonb))"),
            {"target": f"memories:{memory_id}", "details": json.dumps(details)})
        bind.execute(sa.text(
            "UPDATE memories SET source_entry_id = NULL, metadata = coalesce(metadata, "
            "'{}'::jsonb) || jsonb_build_object('duplicate_of_entry', CAST(:entry AS text)) "
            "WHERE memory_id = CAST(:id AS uuid)"), {"id": memory_id, "entry": entry_id})
    return len(rows)


def upgrade() -> None:
    detach_duplicates(op.get_bind())
    op.create_index("ux_memories_source_entry_type", "memories",
                    ["source_entry_id", "memory_type"], unique=True,
                    postgresql_where=sa.text("source_entry_id IS NOT NULL"))


def downgrade() -> None:
    op.drop_index("ux_memories_source_entry_type", table_name="memories")
