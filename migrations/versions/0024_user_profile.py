"""The user's profile as claims with sources (issue 42 item 1; seed 000 §5.4.5: who the
user is, at the start of every session).

`profile_claims`: what the user said about themselves (their own turns: role 'user', no
other speaker), read by consolidation's `profile` operation: their name, where they
live, their work, the people in their life (a slot per relation: `person:sister`), their
preferences (a slot per thing: `preference:tea`) and their current projects (a slot per
project). Each claim names the turn it was read from (`source_entry_id`, the time it was
said) and the detector (the named heuristic, or `llm:<model>`).

- One current claim per (user, slot): a partial unique index. A newer statement on the
  same slot supersedes the current one: it is kept, `retired`, with the time and the
  claim that replaced it (`retired_by`). Nothing is deleted by consolidation.
- A turn claims a slot once (unique source turn and slot): a rescan adds nothing.
- `source_entry_id` is not a foreign key: the night cycle moves old turns to the cortex
  and removes them from day_table, and the profile outlives that. `cogd forget` of the
  turn removes its claims (agent/db/sql/forget.sql); `cogd forget --user` every claim of
  the user (the user_id column).
- `v_profile`: the current claims with the user's handle (the read-only face).

Revision ID: 0024_user_profile
Revises: 0023_process_alive
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision: str = "0024_user_profile"
down_revision: str | None = "0023_process_alive"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KINDS = ("name", "residence", "work", "person", "preference", "project")


def upgrade() -> None:
    op.create_table(
        "profile_claims",
        sa.Column("claim_id", UUID(as_uuid=True), primary_key=True,
                  server_default=sa.text("gen_random_uuid()")),
        sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.user_id"),
                  nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("slot", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("source_entry_id", UUID(as_uuid=True), nullable=False),
        sa.Column("said_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default="current"),
        sa.Column("retired_at", sa.DateTime(timezone=True)),
        sa.Column("retired_by", UUID(as_uuid=True),
                  sa.ForeignKey("profile_claims.claim_id", ondelete="SET NULL")),
        sa.Column("detector", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.CheckConstraint("kind IN (" + ", ".join(repr(k) for k in KINDS) + ")",
                           name="ck_profile_claims_kind"),
        sa.CheckConstraint("slot = kind OR (starts_with(slot, kind || ':') "
                        "AND length(slot) > length(kind) + 1)",
                           name="ck_profile_claims_slot"),
        sa.CheckConstraint("length(value) BETWEEN 1 AND 200", name="ck_profile_claims_value"),
        sa.CheckConstraint("status IN ('current', 'retired')", name="ck_profile_claims_status"),
        sa.CheckConstraint(
            "(status = 'current' AND retired_at IS NULL AND retired_by IS NULL) "
            "OR (status = 'retired' AND retired_at IS NOT NULL)",
            name="ck_profile_claims_retired"),
        sa.CheckConstraint("retired_by IS DISTINCT FROM claim_id",
                           name="ck_profile_claims_not_self"),
        sa.UniqueConstraint("source_entry_id", "slot", name="uq_profile_claims_turn_slot"),
    )
    op.create_index("ux_profile_claims_current", "profile_claims", ["user_id", "slot"],
                    unique=True, postgresql_where=sa.text("status = 'current'"))
    op.create_index("ix_profile_claims_history", "profile_claims",
                    ["user_id", "slot", "said_at"])
    op.create_index("ix_profile_claims_retired_by", "profile_claims", ["retired_by"])
    op.execute("""
        CREATE VIEW v_profile AS
        SELECT u.handle, p.kind, p.slot, p.value, p.said_at, p.source_entry_id, p.detector,
               p.claim_id, p.user_id
        FROM profile_claims p JOIN users u ON u.user_id = p.user_id
        WHERE p.status = 'current'
        ORDER BY u.handle, p.kind, p.said_at DESC""")
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    op.execute("DROP VIEW IF EXISTS v_profile")
    op.drop_table("profile_claims")
