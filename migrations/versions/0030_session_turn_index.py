"""A turn's neighbours in its session by one index: `ix_day_table_session_turn`.

Recall follows the conversation's own order one hop (issue 39 item 3, the query
recall_neighbours): the turns right before and after each of its best turns, looked up by
(session_id, turn_number). The index on session_id alone found them by reading every turn
of the session; a long-running chat session holds thousands. The new index leads with
session_id, so it also serves everything the old one did (the session's last turn,
ORDER BY turn_number DESC LIMIT 1), and replaces it: one btree per insert, as before.

Revision ID: 0030_session_turn_index
Revises: 0029_memory_source
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0030_session_turn_index"
down_revision: str | None = "0029_memory_source"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_day_table_session_turn", "day_table", ["session_id", "turn_number"])
    op.drop_index("ix_day_table_session_id", table_name="day_table")


def downgrade() -> None:
    op.create_index("ix_day_table_session_id", "day_table", ["session_id"])
    op.drop_index("ix_day_table_session_turn", table_name="day_table")
