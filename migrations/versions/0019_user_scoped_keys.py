"""PLACEHOLDER (being written in this wave, issue 38): import keys unique per user, goals/principles per user, server-side written times

Revision ID: 0019_user_scoped_keys
Revises: 0018_memories_hnsw_efc_256
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0019_user_scoped_keys"
down_revision: str | None = "0018_memories_hnsw_efc_256"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
