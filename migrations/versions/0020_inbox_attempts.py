"""Inbox attempt limit and failed state (issue 38, finding 3: a poison message).

- `inbox.attempts`: how many times a loop has claimed the message. The claim increments
  it in the same statement that takes the row (agent/db/sql/inbox.sql inbox_claim), so a
  loop that crashes, is killed or gets stuck mid-turn has still counted its attempt. A
  message claimed more than [process] inbox_max_attempts times is not answered again: the
  loop marks it 'failed' with the reason and sends the user an error reply instead, and
  the messages behind it are answered.
- A 'failed' row carries its reason: CHECK (status <> 'failed' OR error IS NOT NULL).
  Failed rows written before this revision without one (none are expected: the loop has
  always written the error) get a note saying so, so the check can be built.

Revision ID: 0020_inbox_attempts
Revises: 0019_user_scoped_keys
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_inbox_attempts"
down_revision: str | None = "0019_user_scoped_keys"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("inbox", sa.Column("attempts", sa.Integer(), nullable=False,
                                     server_default=sa.text("0")))
    op.create_check_constraint("ck_inbox_attempts", "inbox", "attempts >= 0")
    op.execute("UPDATE inbox SET error = 'failed before revision 0020 (no reason recorded)' "
               "WHERE status = 'failed' AND error IS NULL")
    op.create_check_constraint("ck_inbox_failed_reason", "inbox",
                               "status <> 'failed' OR error IS NOT NULL")


def downgrade() -> None:
    op.drop_constraint("ck_inbox_failed_reason", "inbox", type_="check")
    op.drop_constraint("ck_inbox_attempts", "inbox", type_="check")
    op.drop_column("inbox", "attempts")
