"""Knowledge updates as claim slots (issue 39 item 5; seed 004, Personal Model: "active
facts, retired/disputed claims").

`claims`: a memory that states something about a slot of a subject (where they live,
their job, their partner, their plan) is a claim on that slot. When a newer statement
fills the same slot ("I live in Berlin", later "I moved to Lisbon"), the old claim is
kept, marked `retired`, and linked to the memory that replaced it (`retired_by`,
`retired_at`: the new statement's time). Nothing is deleted: both memories stay, and
recall ranks the claim valid at the asked time first (agent/domain/claims.py).

- One current claim per (user, subject, slot): a partial unique index (the subject is the
  speaker a first-person statement is about: the user, or a named speaker of an import).
- A current claim has no retirement; a retired one has its time (`retired_by` may be
  NULL only when the memory that replaced it was forgotten).
- Every row carries its user (NOT NULL): `cogd forget --user` erases them from the schema
  (agent/db/scrub.py); forgetting the memory removes its claims (ON DELETE CASCADE).

Existing memories get no claims (the detector runs as memories are written).

Revision ID: 0022_claim_slots
Revises: 0021_operator_tokens
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision: str = "0022_claim_slots"
down_revision: str | None = "0021_operator_tokens"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "claims",
        sa.Column("claim_id", UUID(as_uuid=True), primary_key=True,
                  server_default=sa.text("gen_random_uuid()")),
        sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.user_id"),
                  nullable=False),
        sa.Column("memory_id", UUID(as_uuid=True),
                  sa.ForeignKey("memories.memory_id", ondelete="CASCADE"), nullable=False),
        sa.Column("subject", sa.Text, nullable=False),
        sa.Column("slot", sa.Text, nullable=False),
        sa.Column("value", sa.Text, nullable=False),
        sa.Column("status", sa.Text, nullable=False, server_default="current"),
        sa.Column("valid_from", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True)),
        sa.Column("retired_by", UUID(as_uuid=True),
                  sa.ForeignKey("memories.memory_id", ondelete="SET NULL")),
        sa.Column("detector", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.CheckConstraint("status IN ('current', 'retired')", name="ck_claims_status"),
        sa.CheckConstraint(
            "(status = 'current' AND retired_at IS NULL AND retired_by IS NULL) "
            "OR (status = 'retired' AND retired_at IS NOT NULL)", name="ck_claims_retired"),
        sa.CheckConstraint("retired_by IS DISTINCT FROM memory_id", name="ck_claims_not_self"),
        sa.UniqueConstraint("memory_id", "slot", name="uq_claims_memory_slot"),
    )
    op.create_index("ux_claims_current", "claims", ["user_id", "subject", "slot"], unique=True,
                    postgresql_where=sa.text("status = 'current'"))
    op.create_index("ix_claims_slot_history", "claims",
                    ["user_id", "subject", "slot", "valid_from"])
    op.create_index("ix_claims_retired_by", "claims", ["retired_by"])
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    op.drop_table("claims")
