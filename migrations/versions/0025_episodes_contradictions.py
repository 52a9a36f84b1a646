"""PLACEHOLDER, being filled: episodes, milestones and contradiction resolution (issue 42 items 3-4).

Reserved in the revision chain so that parallel work does not fork it; until it is
filled it changes nothing.

Revision ID: 0025_episodes_contradictions
Revises: 0024_user_profile
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0025_episodes_contradictions"
down_revision: str | None = "0024_user_profile"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
