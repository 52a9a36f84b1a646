"""PLACEHOLDER, being filled: bulk import (issue 43 item 1).

Reserved in the revision chain so that parallel work does not fork it; until it is
filled it changes nothing.

Revision ID: 0026_bulk_import
Revises: 0025_episodes_contradictions
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0026_bulk_import"
down_revision: str | None = "0025_episodes_contradictions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
