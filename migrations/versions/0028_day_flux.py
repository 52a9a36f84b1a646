"""The night cycle's per-turn flux flags beside day_table, not in it.

Seed 001 §2 puts `flux_state` (and cogd added `surprise`) on day_table as salience flags
the night cycle refines. Written there, stage 1 (flux detection) updated every turn of
the night: a day_table row (three vectors, ~5 KB) never fits a second version on its
page, so no update was HOT and each one re-inserted the row into every index, the three
HNSW graphs included. At 100,000 imported turns stage 1 took 450 s of the night
(`python -m bench ingest`, bench/results/ingest-100k-2026-12-02.md), 23 s at 10,000.

`day_flux`: one narrow row per turn the night cycle read (`entry_id`, `surprise`,
`flux_state`, `written_at`), written with one INSERT ... ON CONFLICT per batch; it goes
with its turn (ON DELETE CASCADE: the night's cleanup and `cogd forget` delete turns).
The values already written move over; day_table's two columns and their check go.

Revision ID: 0028_day_flux
Revises: 0027_console_sessions
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision: str = "0028_day_flux"
down_revision: str | None = "0027_console_sessions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FLUX_CHECK = "flux_state IS NULL OR flux_state IN ('baseline', 'spike', 'resolution', 'stable')"


def upgrade() -> None:
    op.create_table(
        "day_flux",
        sa.Column("entry_id", UUID(as_uuid=True),
                  sa.ForeignKey("day_table.entry_id", ondelete="CASCADE"), primary_key=True),
        sa.Column("surprise", sa.Float(), nullable=True),
        sa.Column("flux_state", sa.Text(), nullable=True),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.CheckConstraint(FLUX_CHECK, name="ck_day_flux_state"),
    )
    op.execute("INSERT INTO day_flux (entry_id, surprise, flux_state) "
               "SELECT entry_id, surprise, flux_state FROM day_table "
               "WHERE surprise IS NOT NULL OR flux_state IS NOT NULL")
    op.drop_constraint("ck_day_table_flux", "day_table", type_="check")
    op.drop_column("day_table", "surprise")
    op.drop_column("day_table", "flux_state")


def downgrade() -> None:
    op.add_column("day_table", sa.Column("surprise", sa.Float(), nullable=True))
    op.add_column("day_table", sa.Column("flux_state", sa.Text(), nullable=True))
    op.create_check_constraint("ck_day_table_flux", "day_table", FLUX_CHECK)
    op.execute("UPDATE day_table d SET surprise = f.surprise, flux_state = f.flux_state "
               "FROM day_flux f WHERE f.entry_id = d.entry_id")
    op.drop_table("day_flux")
