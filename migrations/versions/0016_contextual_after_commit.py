"""Turns whose contextual vector is embedded after the commit (issue 15, "Recall at a
million memories": the turn write's p95 under 20 ms).

The live loop writes a turn with its content, its verbatim vector and its lexical index
entry, and embeds the turn in context (`index_embedding`, recall's dense key for turns)
right after its reply commits ([recall] index_vector_after_commit). This partial index
finds the turns still waiting for that vector (a crash between the two leaves some) without
reading day_table: it holds only those rows, so it stays empty in steady state.

Revision ID: 0016_contextual_after_commit
Revises: 0015_thinking_layer
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0016_contextual_after_commit"
down_revision: str | None = "0015_thinking_layer"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE INDEX ix_day_table_vector_pending ON day_table (created_at, entry_id) "
               "WHERE index_embedding IS NULL AND index_text IS NOT NULL")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_day_table_vector_pending")
