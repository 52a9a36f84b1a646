"""PLACEHOLDER (being written in this wave, issue 38): operator flag on API tokens, per-user briefs

Revision ID: 0021_operator_tokens
Revises: 0020_inbox_attempts
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0021_operator_tokens"
down_revision: str | None = "0020_inbox_attempts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
