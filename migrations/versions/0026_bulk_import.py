"""Bulk import (issue 43 item 1): one entry-gate decision per turn, in the schema.

`cogd import` writes a batch of turns in one statement and their entry-gate decisions in
another (agent/services/access/bulk_import.py); an interrupted import is run again and
continues. The turns were already unique per user and import key
(uq_day_table_user_external_id, revision 0019); this revision makes the gate's half of
"nothing twice" an invariant too: `ux_gate_decisions_entry`, a partial unique index on
gate_decisions (entry_id) WHERE gate = 'entry'. The write path judges a turn once, in the
transaction that writes it; a second entry decision for the same turn is refused. Exit
decisions and rollover decisions (which may name the same turn) are not constrained.

Revision ID: 0026_bulk_import
Revises: 0025_episodes_contradictions
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0026_bulk_import"
down_revision: str | None = "0025_episodes_contradictions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # no cogd writer made a second entry decision for a turn: none to supersede first
    op.execute("""
        CREATE UNIQUE INDEX ux_gate_decisions_entry ON gate_decisions (entry_id)
        WHERE gate = 'entry'""")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ux_gate_decisions_entry")
