"""State for consolidation and the idle DMN (issue #5).

worker_state: small named JSON values a worker keeps between passes (watermarks
such as the last recall_log id counted, tuned gate weights, the DMN's evolving
surfacing weights, the last time a damping cycle ran), so a pass with no new
input changes nothing. gut_signals: the DMN's gut signal (attention centroid
minus subconscious centroid) with the action taken and an outcome linked later.
goals gain action/usefulness counters (compulsion safety's utility check) and a
metadata column; intentions remember the last session they were carried into.

NOTE for later revisions: chain after this one (down_revision =
"0005_consolidation_dmn").

Revision ID: 0005_consolidation_dmn
Revises: 0004_loop_records
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

revision: str = "0005_consolidation_dmn"
down_revision: str | None = "0004_loop_records"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _universal_dim() -> int:
    from agent.config import load_settings

    return int(load_settings().embedding.universal_dim)


V_THOUGHTS = """
CREATE VIEW v_thoughts AS
SELECT created_at, kind, theme, status, left(content, 160) AS content, source_ids, injected_at
FROM thoughts ORDER BY created_at DESC
"""

V_INTENTIONS = """
CREATE VIEW v_intentions AS
SELECT kind, status, carried_count, carried_count >= 3 AS overdue, round(urgency::numeric, 3)
       AS urgency, left(content, 160) AS content, created_at
FROM intentions ORDER BY status, carried_count DESC, created_at
"""


def upgrade() -> None:
    op.create_table(
        "worker_state",
        sa.Column("key", sa.Text(), primary_key=True),
        sa.Column("value", postgresql.JSONB(), nullable=False,
                  server_default=sa.text("'{}'::jsonb")),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
    )
    op.create_table(
        "gut_signals",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.Column("delta_norm", sa.Float(), nullable=False),
        sa.Column("delta", Vector(_universal_dim()), nullable=False),
        sa.Column("layers", postgresql.JSONB(), nullable=False,
                  server_default=sa.text("'{}'::jsonb")),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("outcome", postgresql.JSONB(), nullable=True),
        sa.Column("outcome_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_gut_signals_created", "gut_signals", ["created_at"])
    op.add_column("goals", sa.Column("actions", sa.Integer(), nullable=False,
                                     server_default="0"))
    op.add_column("goals", sa.Column("useful_actions", sa.Integer(), nullable=False,
                                     server_default="0"))
    op.add_column("goals", sa.Column("metadata", postgresql.JSONB(), nullable=False,
                                     server_default=sa.text("'{}'::jsonb")))
    op.add_column("intentions", sa.Column("last_carried_session", postgresql.UUID(),
                                          nullable=True))
    op.create_index("uq_intentions_source_entry", "intentions", ["source_entry_id"],
                    unique=True)
    op.execute(V_THOUGHTS)
    op.execute(V_INTENTIONS)


def downgrade() -> None:
    op.execute("DROP VIEW v_intentions")
    op.execute("DROP VIEW v_thoughts")
    op.drop_index("uq_intentions_source_entry", table_name="intentions")
    op.drop_column("intentions", "last_carried_session")
    op.drop_column("goals", "metadata")
    op.drop_column("goals", "useful_actions")
    op.drop_column("goals", "actions")
    op.drop_index("ix_gut_signals_created", table_name="gut_signals")
    op.drop_table("gut_signals")
    op.drop_table("worker_state")
