"""Bearer tokens for the HTTP API (`cogd serve`, issue "Plug cogd into the assistants
people already use").

`api_tokens`: one row per token, bound to one user. The token itself is shown once, when
`cogd token create` makes it; the table keeps its SHA-256 (a token is 256 random bits, so
a fast hash is enough) and its first characters, to list and revoke it by. A revoked
token keeps its row (revoked_at): the audit log and `cogd token list` still name it.

Revision ID: 0013_api_tokens
Revises: 0012_lexical_top_k
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision: str = "0013_api_tokens"
down_revision: str | None = "0012_lexical_top_k"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("token_id", UUID(as_uuid=True), primary_key=True,
                  server_default=sa.text("gen_random_uuid()")),
        sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.user_id"),
                  nullable=False),
        sa.Column("name", sa.Text, nullable=False, server_default=""),
        sa.Column("prefix", sa.Text, nullable=False),
        sa.Column("token_hash", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.Column("last_used_at", sa.DateTime(timezone=True)),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
        sa.CheckConstraint("token_hash ~ '^[0-9a-f]{64}$'", name="ck_api_tokens_hash"),
    )
    op.create_index("uq_api_tokens_hash", "api_tokens", ["token_hash"], unique=True)
    op.create_index("ix_api_tokens_user", "api_tokens", ["user_id"])
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    op.drop_table("api_tokens")
