"""What the memory knows reaches the conversation (issue "What the memory knows must reach
the conversation"): session handoff, intentions with a lifecycle, thoughts that act,
emotional state.

- `continuation_notes`: one note per session, written when the session ends or goes quiet
  (seed 000 §5.1, "what was being worked on"); the next session's handoff reads the last
  one. Its `detector` names how it was made (the LLM, or the named heuristic offline).
- `intentions`: a lifecycle (open → fulfilled / dropped) with who resolved it, how
  (`resolution`: detector and evidence), the turn that fulfilled it, and a vector (the
  source turn's, copied when found) so an intention surfaces when its topic comes up.
- `thoughts`: two more kinds, `internal_turn` (a DMN self-prompt answered by System 1
  internally, stored, never sent unprompted) and `epiphany` (a reconsolidation delta shown
  once, in the next relevant turn, as a double take); a `user_id` for thoughts that belong
  to a user but to no session yet.
- `emotional_state`: the (valence, energy, openness) point after each turn, per user,
  with what moved it (seed 000 §3). The current state is the latest row, decayed toward
  the temperament by the time since (the decay is applied on read, in code). `v_emotion`
  shows each user's latest row.
- `memories.emotion`: the emotional imprint of a memory formed in that state (seed 000
  §3.4, §4.2): {"valence", "energy", "openness"}; a partial index of the active
  corrections, which every turn matches against its query.

Revision ID: 0014_conversation_reach
Revises: 0013_api_tokens
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision: str = "0014_conversation_reach"
down_revision: str | None = "0013_api_tokens"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_THOUGHT_KINDS = ("self_prompt", "creative_impulse", "proactive_recall", "discarded")
THOUGHT_KINDS = (*OLD_THOUGHT_KINDS, "internal_turn", "epiphany")

V_EMOTION = """
CREATE VIEW v_emotion AS
SELECT DISTINCT ON (e.user_id) u.handle AS user_handle, e.created_at AS updated_at,
       round(e.valence::numeric, 3) AS valence, round(e.energy::numeric, 3) AS energy,
       round(e.openness::numeric, 3) AS openness, e.label, e.detector,
       now() - e.created_at AS age
FROM emotional_state e LEFT JOIN users u ON u.user_id = e.user_id
ORDER BY e.user_id, e.created_at DESC, e.id DESC
"""

V_INTENTIONS_OLD = """
CREATE VIEW v_intentions AS
SELECT kind, status, carried_count, carried_count >= 3 AS overdue, round(urgency::numeric, 3)
       AS urgency, left(content, 160) AS content, created_at
FROM intentions ORDER BY status, carried_count DESC, created_at
"""

V_INTENTIONS = """
CREATE VIEW v_intentions AS
SELECT kind, status, carried_count, carried_count >= 3 AS overdue, round(urgency::numeric, 3)
       AS urgency, left(content, 160) AS content, created_at, resolved_at,
       resolution->>'detector' AS resolved_by, last_surfaced_at
FROM intentions ORDER BY status, carried_count DESC, created_at
"""


def _universal_dim() -> int:
    settings = context.config.attributes.get("settings")
    if settings is None:
        from agent.config import load_settings

        settings = load_settings()
    return int(settings.embedding.universal_dim)


def _kinds(values: Sequence[str]) -> str:
    return "kind IN (" + ", ".join(f"'{v}'" for v in values) + ")"


def upgrade() -> None:
    op.create_table(
        "continuation_notes",
        sa.Column("note_id", UUID(as_uuid=True), primary_key=True,
                  server_default=sa.text("gen_random_uuid()")),
        sa.Column("session_id", UUID(as_uuid=True), sa.ForeignKey("sessions.session_id"),
                  nullable=False),
        sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.user_id")),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("source_ids", JSONB(), nullable=False, server_default=sa.text("'[]'::jsonb")),
        sa.Column("detector", sa.Text(), nullable=False),
        sa.Column("last_turn_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
    )
    op.create_index("uq_continuation_notes_session", "continuation_notes", ["session_id"],
                    unique=True)
    op.create_index("ix_continuation_notes_user", "continuation_notes",
                    ["user_id", "updated_at"])

    op.add_column("intentions", sa.Column("resolved_at", sa.DateTime(timezone=True)))
    op.add_column("intentions", sa.Column(
        "resolved_by_entry_id", UUID(as_uuid=True),
        sa.ForeignKey("day_table.entry_id", ondelete="SET NULL")))
    op.add_column("intentions", sa.Column("resolution", JSONB()))
    op.add_column("intentions", sa.Column("universal_embedding", Vector(_universal_dim())))
    op.add_column("intentions", sa.Column("last_surfaced_at", sa.DateTime(timezone=True)))
    # an intention found before this revision takes its source turn's vector
    op.execute("""
        UPDATE intentions i SET universal_embedding = d.universal_embedding
        FROM day_table d WHERE d.entry_id = i.source_entry_id
          AND i.universal_embedding IS NULL""")
    op.execute("""
        UPDATE intentions SET resolved_at = updated_at,
               resolution = '{"detector": "before revision 0014"}'::jsonb
        WHERE status <> 'open' AND resolved_at IS NULL""")
    op.create_check_constraint(
        "ck_intentions_resolved", "intentions",
        "(status = 'open') = (resolved_at IS NULL)")
    op.execute("DROP VIEW v_intentions")
    op.execute(V_INTENTIONS)

    op.drop_constraint("ck_thoughts_kind", "thoughts", type_="check")
    op.create_check_constraint("ck_thoughts_kind", "thoughts", _kinds(THOUGHT_KINDS))
    op.add_column("thoughts", sa.Column("user_id", UUID(as_uuid=True),
                                        sa.ForeignKey("users.user_id")))
    op.create_index("ix_thoughts_user_kind", "thoughts", ["user_id", "kind", "status"])

    op.create_table(
        "emotional_state",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.user_id")),
        sa.Column("entry_id", UUID(as_uuid=True),
                  sa.ForeignKey("day_table.entry_id", ondelete="SET NULL")),
        sa.Column("valence", sa.Float(), nullable=False),
        sa.Column("energy", sa.Float(), nullable=False),
        sa.Column("openness", sa.Float(), nullable=False),
        sa.Column("label", sa.Text()),
        sa.Column("detector", sa.Text(), nullable=False),
        sa.Column("signals", JSONB(), nullable=False, server_default=sa.text("'{}'::jsonb")),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.CheckConstraint("valence >= -1 AND valence <= 1", name="ck_emotional_state_valence"),
        sa.CheckConstraint("energy >= 0 AND energy <= 1", name="ck_emotional_state_energy"),
        sa.CheckConstraint("openness >= 0 AND openness <= 1",
                           name="ck_emotional_state_openness"),
    )
    op.create_index("ix_emotional_state_user", "emotional_state", ["user_id", "created_at"])
    op.create_index("uq_emotional_state_entry", "emotional_state", ["entry_id"], unique=True)
    op.add_column("memories", sa.Column("emotion", JSONB()))
    # every turn asks for the corrections that match it: a partial index keeps that from
    # reading the whole memories table
    op.create_index("ix_memories_active_corrections", "memories", ["user_id"],
                    postgresql_where=sa.text(
                        "memory_type = 'correction' AND status = 'active'"))
    op.execute(V_EMOTION)
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    op.execute("DROP VIEW v_emotion")
    op.drop_index("ix_memories_active_corrections", "memories")
    op.drop_column("memories", "emotion")
    op.drop_table("emotional_state")
    op.drop_index("ix_thoughts_user_kind", "thoughts")
    op.drop_column("thoughts", "user_id")
    op.execute("DELETE FROM thoughts WHERE kind IN ('internal_turn', 'epiphany')")
    op.drop_constraint("ck_thoughts_kind", "thoughts", type_="check")
    op.create_check_constraint("ck_thoughts_kind", "thoughts", _kinds(OLD_THOUGHT_KINDS))
    op.execute("DROP VIEW v_intentions")
    op.execute(V_INTENTIONS_OLD)
    op.drop_constraint("ck_intentions_resolved", "intentions", type_="check")
    for col in ("last_surfaced_at", "universal_embedding", "resolution",
                "resolved_by_entry_id", "resolved_at"):
        op.drop_column("intentions", col)
    op.drop_table("continuation_notes")
