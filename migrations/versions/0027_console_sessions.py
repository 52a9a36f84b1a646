"""PLACEHOLDER, being filled: web console sessions (issue 44).

Reserved in the revision chain so that parallel work does not fork it; until it is
filled it changes nothing.

Revision ID: 0027_console_sessions
Revises: 0026_bulk_import
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0027_console_sessions"
down_revision: str | None = "0026_bulk_import"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
