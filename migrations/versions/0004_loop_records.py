"""Records of the cognitive loop: memory citations, System 2 escalations, streaming.

memory_citations: a reply's `[memory:<id>]` tags (issue #4 step 6), one row per
cited id, `valid` false when the id was not among the items recalled for that
turn (an invented citation stays visible). escalations: every System 2
escalation with its triggers and reflection loops (issue #4 step 5).
inbox.partial_reply / inbox.stream: the reply as it streams, for clients that ask
(`cogd chat` at a terminal), so it can be printed live.

Revision ID: 0004_loop_records
Revises: 0003_cjk_and_import_keys
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004_loop_records"
down_revision: str | None = "0003_cjk_and_import_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

V_CITATIONS = """
CREATE VIEW v_citations AS
SELECT c.created_at, c.entry_id AS reply_entry_id, c.cited_id, c.cited_kind, c.valid,
       left(coalesce(m.content, d.content), 120) AS cited_content
FROM memory_citations c
LEFT JOIN memories m ON c.cited_kind = 'memory' AND m.memory_id = c.cited_id
LEFT JOIN day_table d ON c.cited_kind = 'day_table' AND d.entry_id = c.cited_id
ORDER BY c.created_at DESC
"""

V_ESCALATIONS = """
CREATE VIEW v_escalations AS
SELECT e.created_at, e.session_id, e.triggers, e.stakes, e.loops, e.outcome,
       left(d.content, 120) AS user_message
FROM escalations e
LEFT JOIN day_table d ON d.entry_id = e.entry_id
ORDER BY e.created_at DESC
"""


def upgrade() -> None:
    op.create_table(
        "memory_citations",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column(
            "entry_id", postgresql.UUID(), sa.ForeignKey("day_table.entry_id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("cited_id", postgresql.UUID(), nullable=False),
        sa.Column("cited_kind", sa.Text(), nullable=True),
        sa.Column("valid", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
        sa.UniqueConstraint("entry_id", "cited_id", name="uq_memory_citations"),
    )
    op.create_index("ix_memory_citations_cited", "memory_citations", ["cited_id"])
    op.create_table(
        "escalations",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column(
            "entry_id", postgresql.UUID(), sa.ForeignKey("day_table.entry_id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("session_id", postgresql.UUID(), sa.ForeignKey("sessions.session_id"),
                  nullable=True),
        sa.Column("triggers", postgresql.JSONB(), nullable=False,
                  server_default=sa.text("'[]'::jsonb")),
        sa.Column("stakes", postgresql.JSONB(), nullable=False,
                  server_default=sa.text("'[]'::jsonb")),
        sa.Column("monitors", postgresql.JSONB(), nullable=False,
                  server_default=sa.text("'{}'::jsonb")),
        sa.Column("loops", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("outcome", sa.Text(), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False),
    )
    op.create_index("ix_escalations_created", "escalations", ["created_at"])
    op.add_column("inbox", sa.Column("partial_reply", sa.Text(), nullable=True))
    op.add_column(
        "inbox", sa.Column("stream", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.execute(V_CITATIONS)
    op.execute(V_ESCALATIONS)


def downgrade() -> None:
    op.execute("DROP VIEW v_escalations")
    op.execute("DROP VIEW v_citations")
    op.drop_column("inbox", "stream")
    op.drop_column("inbox", "partial_reply")
    op.drop_index("ix_escalations_created", table_name="escalations")
    op.drop_table("escalations")
    op.drop_index("ix_memory_citations_cited", table_name="memory_citations")
    op.drop_table("memory_citations")
