"""PLACEHOLDER, being filled: user profile (issue 42 item 1).

Reserved in the revision chain so that parallel work does not fork it; until it is
filled it changes nothing.

Revision ID: 0024_user_profile
Revises: 0023_process_alive
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0024_user_profile"
down_revision: str | None = "0023_process_alive"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
