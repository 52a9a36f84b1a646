"""PLACEHOLDER (being written in this wave, issue 38): inbox attempt limit and failed state

Revision ID: 0020_inbox_attempts
Revises: 0019_user_scoped_keys
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0020_inbox_attempts"
down_revision: str | None = "0019_user_scoped_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
