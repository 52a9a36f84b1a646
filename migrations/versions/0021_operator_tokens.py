"""Operator tokens and per-user morning briefs (issue 38, findings 1 and 10).

- `api_tokens.operator`: a token made with `cogd token create --operator`. Only such a
  token sees installation-wide figures (`/v1/status` and MCP `status`: worker processes,
  their pids, global row counts); every other token sees its own user's counts. Existing
  tokens are not operator tokens (default false).
- `night_briefs`: one morning brief per run and user, in Postgres (run_id, user_id
  primary key: written once per run and user). The night cycle writes it from that
  user's own blocks and overnight thoughts; `MemoryAPI.brief()` (MCP
  `cogd://brief/latest`) reads the caller's newest one, never another user's and never a
  path on disk. The run's brief.md on disk stays the operator's (installation-wide:
  every user's blocks, cortex themes, preoccupations), read through the CLI. Runs
  finished before this revision have no per-user briefs: a user's first one comes with
  the next night cycle.

Revision ID: 0021_operator_tokens
Revises: 0020_inbox_attempts
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision: str = "0021_operator_tokens"
down_revision: str | None = "0020_inbox_attempts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("api_tokens", sa.Column("operator", sa.Boolean(), nullable=False,
                                          server_default=sa.text("false")))
    op.create_table(
        "night_briefs",
        sa.Column("run_id", sa.BigInteger, sa.ForeignKey("night_cycle_runs.run_id"),
                  nullable=False),
        sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.user_id"),
                  nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.PrimaryKeyConstraint("run_id", "user_id", name="pk_night_briefs"),
    )
    op.create_index("ix_night_briefs_user", "night_briefs", ["user_id", "run_id"])
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    op.drop_table("night_briefs")
    op.drop_column("api_tokens", "operator")
