"""Exactly-once by the schema (issue "Exactly-once by the schema, real crashes, and a
locked-down embedded server").

- One user turn and one reply turn per inbox message: a unique index on day_table
  (inbox_id, role) where inbox_id is set; one outbox row per inbox message: a unique index
  on outbox (inbox_id). Before they are built, duplicates already present (written by two
  loop workers before this revision) are reported: each is logged, recorded in audit_log
  (`action = 'duplicate_detached'`, the row's table, id and inbox_id), and every copy but
  the first is detached from its inbox message (inbox_id set to NULL). No row is deleted:
  the text stays, it only stops claiming to be the answer to that message.
- A lease instead of a blind takeover: `inbox.lease_until`, set when a loop claims a
  message and renewed by its owner while it works; another loop takes a 'processing' row
  over only when the lease has run out or the claiming connection is gone.
- A client idempotency key: `inbox.idempotency_key` (unique when set), so a resend after
  a dropped connection is recognised by its key, not by matching text and time.

Revision ID: 0008_exactly_once
Revises: 0007_contextual_index
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_exactly_once"
down_revision: str | None = "0007_contextual_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

logger = logging.getLogger("alembic.runtime.migration")

# (table, primary key, the columns that must be unique once inbox_id is set)
DUPLICATES = {
    "day_table": ("entry_id", ("inbox_id", "role")),
    "outbox": ("id", ("inbox_id",)),
}


def detach_duplicates(bind: sa.engine.Connection) -> int:
    """Report every copy after the first of a (table's unique key) group and detach it from
    its inbox message; returns how many rows were detached."""
    detached = 0
    for table, (pk, key) in DUPLICATES.items():
        cols = ", ".join(key)
        rows = bind.execute(sa.text(
            f"SELECT {pk}::text, {cols} FROM ("
            f"  SELECT {pk}, {cols}, row_number() OVER (PARTITION BY {cols} "
            f"         ORDER BY created_at, {pk}) AS n"
            f"  FROM {table} WHERE inbox_id IS NOT NULL) d WHERE n > 1")).fetchall()
        for row in rows:
            details = {"table": table, "id": row[0], **{c: row[i + 1]
                                                         for i, c in enumerate(key)}}
            logger.warning("0008: %s row %s duplicates %s; detached from its inbox message",
                           table, row[0], {c: details[c] for c in key})
            bind.execute(sa.text(
                "INSERT INTO audit_log (actor, action, target, details) "
                "VALUES ('migration 0008', 'duplicate_detached', :target, "
                "CAST(:details AS jsonb))"),
                {"target": f"{table}:{row[0]}", "details": json.dumps(details, default=str)})
            bind.execute(sa.text(f"UPDATE {table} SET inbox_id = NULL WHERE {pk}::text = :id"),
                         {"id": row[0]})
            detached += 1
    return detached


def upgrade() -> None:
    detach_duplicates(op.get_bind())
    op.create_index("ux_day_table_inbox_role", "day_table", ["inbox_id", "role"],
                    unique=True, postgresql_where=sa.text("inbox_id IS NOT NULL"))
    op.create_index("ux_outbox_inbox", "outbox", ["inbox_id"], unique=True,
                    postgresql_where=sa.text("inbox_id IS NOT NULL"))
    op.add_column("inbox", sa.Column("lease_until", sa.DateTime(timezone=True)))
    op.add_column("inbox", sa.Column("idempotency_key", sa.Text()))
    op.create_index("ux_inbox_idempotency_key", "inbox", ["idempotency_key"], unique=True,
                    postgresql_where=sa.text("idempotency_key IS NOT NULL"))


def downgrade() -> None:
    op.drop_index("ux_inbox_idempotency_key", table_name="inbox")
    op.drop_column("inbox", "idempotency_key")
    op.drop_column("inbox", "lease_until")
    op.drop_index("ux_outbox_inbox", table_name="outbox")
    op.drop_index("ux_day_table_inbox_role", table_name="day_table")
