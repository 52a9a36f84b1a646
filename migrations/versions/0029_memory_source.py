"""Whose words a memory holds, kept on the memory: `memories.source_role`, `source_speaker`.

A memory made from a turn read whose words it holds (the role, the speaker's name) from
that turn, joined by `source_entry_id`. The night cycle's cleanup deletes a normal user's
turns after a day (seed 001 §8.3, [retention]); from then on the memory had no role and no
speaker: recall's data section could not say whose words they were, and the grounded
reply (issue 40) never said back a fact told before the last night, since only the user's
own words are said back.

The two columns are filled in the schema, not by each writer: a BEFORE INSERT trigger
copies them from the source turn when the writer gives none (the exit gate, consolidation,
imports and the API all write memories). Existing memories are not rewritten (an UPDATE
of every row re-inserts it into memories' HNSW index: minutes at 1M rows); readers take
the turn's values first and the memory's when the turn is gone, so nothing read changes
for a memory whose turn is still there.

Revision ID: 0029_memory_source
Revises: 0028_day_flux
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029_memory_source"
down_revision: str | None = "0028_day_flux"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memories", sa.Column("source_role", sa.Text(), nullable=True))
    op.add_column("memories", sa.Column("source_speaker", sa.Text(), nullable=True))
    op.create_check_constraint(
        "ck_memories_source_role", "memories",
        "source_role IS NULL OR source_role IN ('user', 'assistant', 'system')")
    op.execute("""
        CREATE FUNCTION cogd_memories_source_of_turn() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.source_entry_id IS NOT NULL
               AND (NEW.source_role IS NULL OR NEW.source_speaker IS NULL) THEN
                SELECT coalesce(NEW.source_role, d.role),
                       coalesce(NEW.source_speaker, d.speaker)
                  INTO NEW.source_role, NEW.source_speaker
                  FROM day_table d WHERE d.entry_id = NEW.source_entry_id;
            END IF;
            RETURN NEW;
        END $$""")
    op.execute("CREATE TRIGGER trg_memories_source_of_turn BEFORE INSERT ON memories "
               "FOR EACH ROW EXECUTE FUNCTION cogd_memories_source_of_turn()")


def downgrade() -> None:
    op.execute("DROP TRIGGER trg_memories_source_of_turn ON memories")
    op.execute("DROP FUNCTION cogd_memories_source_of_turn()")
    op.drop_constraint("ck_memories_source_role", "memories", type_="check")
    op.drop_column("memories", "source_speaker")
    op.drop_column("memories", "source_role")
