"""Per-user import keys, per-user goals, and the times cogd wrote rows (issue 38).

- Import keys are unique per user, not across the installation: `day_table.external_id`
  per (user_id, external_id) (rows of no user share one namespace: NULLS NOT DISTINCT),
  `sessions.external_id` per (user_id, external_id). Before, a key one user held made
  another's line a silent duplicate (and told them the key exists), and their session
  "belongs to another user".
- `goals.user_id`: a goal promoted from one user's memories is that user's, and reaches
  only that user's prompt; NULL is an installation-wide goal (config, operator).
- `written_at` on `day_table` and `memories`: when cogd wrote the row (the server's clock).
  `created_at` stays the event time a client may supply (an import's timestamps) for recall
  and the timeline; promotion's span and decay read `written_at`, so back-dated lines are
  no evidence that something recurred. Existing rows are backfilled from created_at (the
  best there is: before this revision no other time was kept).

Downgrade: the global key indexes come back only when no key is shared by two users (it
stops with a clear error otherwise); user-owned goals are retired, not made global (their
owner is kept in metadata), then the column goes.

Revision ID: 0019_user_scoped_keys
Revises: 0018_memories_hnsw_efc_256
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision: str = "0019_user_scoped_keys"
down_revision: str | None = "0018_memories_hnsw_efc_256"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # import keys: per user
    op.drop_index("uq_day_table_external_id", table_name="day_table")
    op.create_index("uq_day_table_user_external_id", "day_table", ["user_id", "external_id"],
                    unique=True, postgresql_where=sa.text("external_id IS NOT NULL"),
                    postgresql_nulls_not_distinct=True)
    op.drop_index("uq_sessions_external_id", table_name="sessions")
    op.create_index("uq_sessions_user_external_id", "sessions", ["user_id", "external_id"],
                    unique=True)
    # goals: a user's, or installation-wide (NULL)
    op.add_column("goals", sa.Column("user_id", UUID(as_uuid=True),
                                     sa.ForeignKey("users.user_id"), nullable=True))
    op.create_index("ix_goals_user_status", "goals", ["user_id", "status"])
    # when cogd wrote the row; existing rows: their created_at (no other time was kept)
    for table in ("day_table", "memories"):
        op.add_column(table, sa.Column("written_at", sa.DateTime(timezone=True)))
        op.execute(f"UPDATE {table} SET written_at = created_at")  # no trigger reads it
        op.alter_column(table, "written_at", nullable=False, server_default=sa.text("now()"))


def downgrade() -> None:
    for table in ("memories", "day_table"):
        op.drop_column(table, "written_at")
    op.execute("""UPDATE goals SET status = 'retired', updated_at = now(),
                  metadata = metadata || jsonb_build_object('owner', user_id::text,
                      'retired_by', 'downgrade of 0019_user_scoped_keys')
                  WHERE user_id IS NOT NULL""")
    op.drop_index("ix_goals_user_status", table_name="goals")
    op.drop_column("goals", "user_id")
    for table in ("day_table", "sessions"):
        op.execute(f"""DO $$ BEGIN
            IF EXISTS (SELECT 1 FROM {table} WHERE external_id IS NOT NULL
                       GROUP BY external_id HAVING count(*) > 1) THEN
                RAISE EXCEPTION 'cannot downgrade: two users hold the same {table} '
                    'external_id; the global key index would refuse it';
            END IF; END $$""")
    op.drop_index("uq_sessions_user_external_id", table_name="sessions")
    op.create_index("uq_sessions_external_id", "sessions", ["external_id"], unique=True)
    op.drop_index("uq_day_table_user_external_id", table_name="day_table")
    op.create_index("uq_day_table_external_id", "day_table", ["external_id"], unique=True)
