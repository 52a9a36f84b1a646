"""Contradiction resolution, episodes and milestones (issue 42 items 3-4; seed 000 §4.5.3,
§4.3, §4.6.3).

`contradiction_resolutions`: how a flagged `contradicts` link (memory_links) was resolved:
keep_a, keep_b or merge, the memory that stands (`kept_id`: a, b, or the new merged
memory) and the ones it superseded. The losing memory is never deleted: it becomes
`superseded`, with a `supersedes` link from the memory that stands (what `cogd why`
follows). One resolution per link: a unique key, so a second resolve of the same
contradiction is refused by the schema, not a second supersession.

`episodes`: a coherent span of one user's conversation (a session or a day, cut at time
gaps and topic shifts; the night cycle's stage 11), with its dates, a title (the LLM's,
or a heuristic's from salient terms: `titled_by` says which), the blocks and day_table
turns it was made from. `episode_blocks`: a block belongs to one episode at most (its
primary key). `milestones`: dated events inside an episode (the first mention of a
person or project, a decision, a move, an important or emotional event), with the turn
they come from; one per (user, kind, key), so a first mention is recorded once.

Forgetting: every row carries its user (erased with `cogd forget --user`); the rows that
point at a memory, a link, a block or a turn go with it (ON DELETE CASCADE / SET NULL).

Revision ID: 0025_episodes_contradictions
Revises: 0024_user_profile
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import ARRAY, UUID

revision: str = "0025_episodes_contradictions"
down_revision: str | None = "0024_user_profile"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "contradiction_resolutions",
        sa.Column("resolution_id", sa.BigInteger, sa.Identity(always=False), primary_key=True),
        sa.Column("link_id", sa.BigInteger,
                  sa.ForeignKey("memory_links.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.user_id")),
        sa.Column("action", sa.Text, nullable=False),
        sa.Column("kept_id", UUID(as_uuid=True),
                  sa.ForeignKey("memories.memory_id", ondelete="CASCADE"), nullable=False),
        sa.Column("superseded", ARRAY(UUID(as_uuid=True)), nullable=False),
        sa.Column("how", sa.Text, nullable=False),
        sa.Column("actor", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.CheckConstraint("action IN ('keep_a', 'keep_b', 'merge')",
                           name="ck_contradiction_resolutions_action"),
        sa.CheckConstraint("cardinality(superseded) >= 1",
                           name="ck_contradiction_resolutions_superseded"),
        sa.UniqueConstraint("link_id", name="uq_contradiction_resolutions_link"),
    )
    op.create_table(
        "episodes",
        sa.Column("episode_id", UUID(as_uuid=True), primary_key=True),
        sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.user_id")),
        sa.Column("session_ids", ARRAY(UUID(as_uuid=True)), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("titled_by", sa.Text, nullable=False),
        sa.Column("terms", ARRAY(sa.Text), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("source_entry_ids", ARRAY(UUID(as_uuid=True)), nullable=False),
        sa.Column("detector", sa.Text, nullable=False),
        sa.Column("run_id", sa.BigInteger, sa.ForeignKey("night_cycle_runs.run_id")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.CheckConstraint("ended_at >= started_at", name="ck_episodes_span"),
    )
    op.create_index("ix_episodes_user_started", "episodes", ["user_id", "started_at"])
    op.create_table(
        "episode_blocks",
        sa.Column("block_id", UUID(as_uuid=True),
                  sa.ForeignKey("holographic_blocks.block_id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("episode_id", UUID(as_uuid=True),
                  sa.ForeignKey("episodes.episode_id", ondelete="CASCADE"), nullable=False),
    )
    op.create_index("ix_episode_blocks_episode", "episode_blocks", ["episode_id"])
    op.create_table(
        "milestones",
        sa.Column("milestone_id", UUID(as_uuid=True), primary_key=True,
                  server_default=sa.text("gen_random_uuid()")),
        sa.Column("episode_id", UUID(as_uuid=True),
                  sa.ForeignKey("episodes.episode_id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.user_id")),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("importance", sa.Float, nullable=False),
        sa.Column("source_entry_id", UUID(as_uuid=True),
                  sa.ForeignKey("day_table.entry_id", ondelete="SET NULL")),
        sa.Column("detector", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.CheckConstraint("kind IN ('first_mention', 'decision', 'move', 'event')",
                           name="ck_milestones_kind"),
        sa.CheckConstraint("importance >= 0 AND importance <= 1",
                           name="ck_milestones_importance"),
    )
    op.create_index("ux_milestones_key", "milestones", ["user_id", "kind", "key"], unique=True,
                    postgresql_nulls_not_distinct=True)
    op.create_index("ix_milestones_episode", "milestones", ["episode_id"])
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    op.drop_table("milestones")
    op.drop_table("episode_blocks")
    op.drop_index("ix_episodes_user_started", table_name="episodes")
    op.drop_table("episodes")
    op.drop_table("contradiction_resolutions")
