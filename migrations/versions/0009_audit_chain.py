"""A hash chain over audit_log, so that tampering shows even when the owner does it
(issue "Exactly-once by the schema, real crashes, and a locked-down embedded server").

audit_log was append-only by trigger (revision 0002), but the owner can drop a trigger.
Each row now carries `prev_hash` (the previous row's hash) and `row_hash` = sha256 over
the previous hash and the row's own fields (id, time in UTC, actor, action, target,
details; the SQL function `cogd_audit_row_hash`), set by a BEFORE INSERT trigger that
takes a transaction-level advisory lock and draws the id under it, so that concurrent
inserts chain in id order. Existing rows are chained in id order by this revision.
`cogd audit verify` recomputes the chain with the same function: a changed, deleted or inserted row
breaks it at that row, unless every later hash is forged too, which the head hash that
`verify` prints (and a copy kept elsewhere) exposes.

Revision ID: 0009_audit_chain
Revises: 0008_exactly_once
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_audit_chain"
down_revision: str | None = "0008_exactly_once"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# the bytes a row's hash covers: one SQL function, used by the trigger, the backfill
# below and `cogd audit verify` (agent/commands/ops.py)
ROW_HASH_FUNCTION = """
CREATE FUNCTION cogd_audit_row_hash(prev text, r audit_log) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT encode(sha256(convert_to(
        coalesce(prev, '') || '|' || r.id::text || '|' ||
        to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '|' ||
        r.actor || '|' || r.action || '|' || coalesce(r.target, '') || '|' ||
        r.details::text, 'UTF8')), 'hex')
$$"""
CHAIN_LOCK = 4242_0009  # pg_advisory_xact_lock key: one chain writer at a time


def upgrade() -> None:
    op.add_column("audit_log", sa.Column("prev_hash", sa.Text()))
    op.add_column("audit_log", sa.Column("row_hash", sa.Text()))
    op.execute(ROW_HASH_FUNCTION)
    op.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update_delete")
    op.execute("""
        DO $$
        DECLARE r audit_log; prev text := NULL;
        BEGIN
            FOR r IN SELECT * FROM audit_log ORDER BY id LOOP
                UPDATE audit_log SET prev_hash = prev, row_hash = cogd_audit_row_hash(prev, r)
                WHERE id = r.id RETURNING row_hash INTO prev;
            END LOOP;
        END $$""")
    op.execute("ALTER TABLE audit_log ENABLE TRIGGER audit_log_no_update_delete")
    op.execute(f"""
        CREATE FUNCTION cogd_audit_log_chain() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock({CHAIN_LOCK});
            -- the id is drawn under the lock, held to commit: ids follow the chain
            NEW.id := nextval(pg_get_serial_sequence('audit_log', 'id'));
            SELECT row_hash INTO NEW.prev_hash FROM audit_log ORDER BY id DESC LIMIT 1;
            NEW.row_hash := cogd_audit_row_hash(NEW.prev_hash, NEW);
            RETURN NEW;
        END $$""")
    op.execute("""
        CREATE TRIGGER audit_log_chain BEFORE INSERT ON audit_log
        FOR EACH ROW EXECUTE FUNCTION cogd_audit_log_chain()""")


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS audit_log_chain ON audit_log")
    op.execute("DROP FUNCTION IF EXISTS cogd_audit_log_chain()")
    op.execute("DROP FUNCTION IF EXISTS cogd_audit_row_hash(text, audit_log)")
    op.drop_column("audit_log", "row_hash")
    op.drop_column("audit_log", "prev_hash")
