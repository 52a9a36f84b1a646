"""The hippocampus schema as SQLAlchemy Core metadata.

Used by `alembic check` to prove the revisions in migrations/ and this model agree.
Embedding dimensions come from config, so the metadata is built by a function.
Views, triggers and functions live only in the revisions (op.execute).
"""

from __future__ import annotations

from typing import Any

from pgvector.sqlalchemy import HALFVEC, Vector
from sqlalchemy import (
    REAL,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Identity,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR, UUID

# 'simple' is the language-agnostic text search configuration (no stemming, no stop words);
# cogd_cjk_ngrams (revision 0003) adds CJK character bigrams so mixed-language text matches
TSV_EXPR = (
    "to_tsvector('simple'::regconfig, coalesce(content, '') || ' ' "
    "|| coalesce(cogd_cjk_ngrams(content), ''))"
)

USER_TIERS = ("normal", "meso", "elder")
ROLES = ("user", "assistant", "system")
FLUX_STATES = ("baseline", "spike", "resolution", "stable")
MESSAGE_TYPES = ("dialogue", "internal_monologue", "epiphany", "system")
MEMORY_TYPES = (
    "episodic",
    "preference",
    "decision",
    "fact",
    "insight",
    "correction",
    "instruction",
    "reflection",
    "intention",
)
MEMORY_STATUSES = ("active", "superseded", "archived")
CLAIM_STATUSES = ("current", "retired")  # revision 0022 (agent/domain/claims.py)
PROFILE_KINDS = ("name", "residence", "work", "person", "preference", "project")  # 0024
LINK_TYPES = ("supersedes", "contradicts", "related")
RESOLUTION_ACTIONS = ("keep_a", "keep_b", "merge")  # revision 0025 (seed 000 §4.5.3)
MILESTONE_KINDS = ("first_mention", "decision", "move", "event")  # revision 0025
THOUGHT_KINDS = (
    "self_prompt", "creative_impulse", "proactive_recall", "discarded",
    "internal_turn", "epiphany",  # revision 0014
    "overnight", "creative_drift",  # revision 0015: the night's thinking phase
)
MODEL_DOMAINS = ("work_patterns", "emotional", "project", "behavioral", "technical",
                 "business", "general")  # seed 000 §10.2
MODEL_STATUSES = ("active", "weakened", "invalidated", "superseded")
PREDICTION_STATUSES = ("pending", "correct", "wrong", "partially_correct", "expired")
PRINCIPLE_STATUSES = ("active", "challenged", "retired", "proposed")
PROBLEM_KINDS = ("open_question", "contradiction", "failed_prediction", "user_submitted")
PROBLEM_STATUSES = ("open", "worked", "resolved", "dropped")
INTENTION_STATUSES = ("open", "fulfilled", "dropped")


def _in(col: str, values: tuple[str, ...]) -> str:
    return f"{col} IN ({', '.join(repr(v) for v in values)})"


def _uuid_pk(name: str) -> Column:
    return Column(
        name, UUID(as_uuid=True), primary_key=True, server_default=text("gen_random_uuid()")
    )


def _ts(name: str = "created_at", nullable: bool = False) -> Column:
    return Column(
        name,
        DateTime(timezone=True),
        nullable=nullable,
        server_default=None if nullable else text("now()"),
    )


def _serial_pk(name: str = "id") -> Column:
    return Column(name, BigInteger, Identity(always=False), primary_key=True)


def _index_columns() -> list[Column]:
    """The derived, versioned index entry of a row (revision 0007, agent/domain/contextual.py)."""
    return [Column("index_text", Text), Column("index_tsv", TSVECTOR),
            Column("index_version", SmallInteger)]


def _hnsw(table: str, column: str, ops: str, **build: int) -> Index:
    """An HNSW index; `build`: its build parameters (m, ef_construction), pgvector's
    defaults (16, 64) where not given."""
    options: dict[str, Any] = {"postgresql_with": build} if build else {}
    return Index(f"ix_{table}_{column}_hnsw", column, postgresql_using="hnsw",
                 postgresql_ops={column: ops}, **options)


def build_metadata(universal_dim: int, native_dim: int) -> MetaData:
    """Every hippocampus table, with embedding columns of the configured dimensions."""
    md = MetaData()
    universal = Vector(universal_dim)
    native = HALFVEC(native_dim)

    Table(
        "users",
        md,
        _uuid_pk("user_id"),
        Column("handle", Text, nullable=False, unique=True),
        Column("display_name", Text),
        Column("tier", Text, nullable=False, server_default="normal"),
        _ts(),
        CheckConstraint(_in("tier", USER_TIERS), name="ck_users_tier"),
    )

    Table(
        "sessions",
        md,
        _uuid_pk("session_id"),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id"), nullable=False),
        Column("channel", Text, nullable=False, server_default="cli"),
        Column("started_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
        _ts("ended_at", nullable=True),
        Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("external_id", Text),
        Index("ix_sessions_user_id", "user_id"),
        # revision 0019: import keys are unique per user
        Index("uq_sessions_user_external_id", "user_id", "external_id", unique=True),
    )

    Table(
        "day_table",
        md,
        _uuid_pk("entry_id"),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id"), nullable=False),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),
        Column("user_tier", Text),
        Column("role", Text, nullable=False),
        Column("content", Text, nullable=False),
        Column("native_embedding", native),
        Column("native_model", Text),
        Column("universal_embedding", universal),
        _ts(),
        Column("perplexity_score", Float),
        Column("turn_number", Integer),
        Column("token_count", Integer),
        Column("message_type", Text, nullable=False, server_default="dialogue"),
        Column("epiphany_metadata", JSONB),
        Column("inbox_id", BigInteger, ForeignKey("inbox.id")),
        Column("external_id", Text),
        Column("content_tsv", TSVECTOR, Computed(TSV_EXPR, persisted=True)),
        Column("speaker", Text),  # revision 0007
        Column("index_embedding", universal),  # revision 0007: the turn in context
        *_index_columns(),
        # revision 0019: when cogd wrote the row (created_at may be a client's event time)
        _ts("written_at"),
        CheckConstraint(_in("role", ROLES), name="ck_day_table_role"),
        CheckConstraint(_in("message_type", MESSAGE_TYPES), name="ck_day_table_message_type"),
        CheckConstraint(
            f"user_tier IS NULL OR {_in('user_tier', USER_TIERS)}", name="ck_day_table_tier"
        ),
        Index("ix_day_table_session_turn", "session_id", "turn_number"),  # revision 0030
        Index("ix_day_table_created_at", "created_at"),
        Index("ix_day_table_user_created", "user_id", "created_at"),
        Index("ix_day_table_message_type", "message_type"),
        # revision 0019: import keys are unique per user (rows of no user: one namespace)
        Index("uq_day_table_user_external_id", "user_id", "external_id", unique=True,
              postgresql_where=text("external_id IS NOT NULL"),
              postgresql_nulls_not_distinct=True),
        Index("ix_day_table_content_tsv", "content_tsv", postgresql_using="gin"),
        Index("ix_day_table_index_version", "index_version"),
        Index("ix_day_table_speaker", "speaker"),
        # revision 0008: one user turn and one reply per inbox message
        Index("ux_day_table_inbox_role", "inbox_id", "role", unique=True,
              postgresql_where=text("inbox_id IS NOT NULL")),
        # revision 0016: turns whose contextual vector is still to be embedded
        Index("ix_day_table_vector_pending", "created_at", "entry_id",
              postgresql_where=text("index_embedding IS NULL AND index_text IS NOT NULL")),
        _hnsw("day_table", "universal_embedding", "vector_cosine_ops"),
        _hnsw("day_table", "native_embedding", "halfvec_cosine_ops"),
        _hnsw("day_table", "index_embedding", "vector_cosine_ops"),
        # revision 0017: the three vector columns are STORAGE MAIN (kept in the row, not
        # toasted): the dense lists scan this small table. SQLAlchemy has no column storage
        # option, so this lives in the migration alone (tests/integration/test_schema.py)
    )

    Table(
        "scratch_buffer",
        md,
        _serial_pk(),
        Column(
            "entry_id", UUID(as_uuid=True), ForeignKey("day_table.entry_id", ondelete="SET NULL")
        ),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id")),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),
        Column("content", Text, nullable=False),
        Column("signals", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("status", Text, nullable=False, server_default="pending"),
        Column("attempts", Integer, nullable=False, server_default="0"),
        _ts(),
        _ts("processed_at", nullable=True),
        CheckConstraint(
            _in("status", ("pending", "persisted", "dropped", "failed")), name="ck_scratch_status"
        ),
        Index("ix_scratch_buffer_status", "status", "created_at"),
        Index("ix_scratch_buffer_entry_id", "entry_id"),  # revision 0006
    )

    Table(
        "memories",
        md,
        _uuid_pk("memory_id"),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id")),
        Column(
            "source_entry_id",
            UUID(as_uuid=True),
            ForeignKey("day_table.entry_id", ondelete="SET NULL"),
        ),
        Column("memory_type", Text, nullable=False, server_default="episodic"),
        Column("content", Text, nullable=False),
        Column("universal_embedding", universal),
        Column("native_embedding", native),
        Column("native_model", Text),
        Column("importance", Float, nullable=False, server_default="0.5"),
        Column("confidence", Float, nullable=False, server_default="0.5"),
        Column("access_count", Integer, nullable=False, server_default="0"),
        _ts("last_accessed", nullable=True),
        Column("evidence_count", Integer, nullable=False, server_default="1"),
        Column("landmark", Boolean, nullable=False, server_default=text("false")),
        Column("status", Text, nullable=False, server_default="active"),
        Column("fails_when", Text),
        Column("fine_when", Text),
        Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        _ts(),
        Column("updated_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
        Column("content_tsv", TSVECTOR, Computed(TSV_EXPR, persisted=True)),
        Column("emotion", JSONB),  # revision 0014: the emotional imprint (seed 000 §3.4)
        # revision 0029: whose words (the source turn's role and speaker, copied on insert
        # by trg_memories_source_of_turn; kept once the night's cleanup deletes the turn)
        Column("source_role", Text),
        Column("source_speaker", Text),
        # revision 0019: when cogd wrote the row (created_at is the event time, which an
        # import's client supplies): promotion's span and decay read this one
        _ts("written_at"),
        Index("ix_memories_active_corrections", "user_id",  # revision 0014: every turn's
              postgresql_where=text("memory_type = 'correction' AND status = 'active'")),
        *_index_columns(),
        CheckConstraint(_in("memory_type", MEMORY_TYPES), name="ck_memories_type"),
        CheckConstraint(_in("status", MEMORY_STATUSES), name="ck_memories_status"),
        CheckConstraint("importance >= 0 AND importance <= 1", name="ck_memories_importance"),
        CheckConstraint("confidence >= 0 AND confidence <= 1", name="ck_memories_confidence"),
        CheckConstraint("source_role IS NULL OR source_role IN ('user', 'assistant', 'system')",
                        name="ck_memories_source_role"),
        Index("ix_memories_user_status", "user_id", "status"),
        Index("ix_memories_importance", "importance"),
        Index("ix_memories_content_tsv", "content_tsv", postgresql_using="gin"),
        Index("ix_memories_index_version", "index_version"),
        Index("ix_memories_created_at", "created_at"),  # revision 0015: the models' pass
        # revision 0027: the console's timeline of a user's memories without a turn
        Index("ix_memories_user_turnless", "user_id", "created_at", "memory_id",
              postgresql_where=text("source_entry_id IS NULL")),
        # revision 0011: one memory of a kind per turn
        Index("ux_memories_source_entry_type", "source_entry_id", "memory_type", unique=True,
              postgresql_where=text("source_entry_id IS NOT NULL")),
        # revisions 0017/0018: a denser graph (index recall@10 >= 0.95 at 1M memories with
        # ef_search 400; 0017's ef_construction 128 needed 800)
        _hnsw("memories", "universal_embedding", "vector_cosine_ops", m=16,
              ef_construction=256),
        _hnsw("memories", "native_embedding", "halfvec_cosine_ops"),
    )

    Table(
        "memory_links",
        md,
        _serial_pk(),
        Column("source_id", UUID(as_uuid=True), ForeignKey("memories.memory_id"), nullable=False),
        Column("target_id", UUID(as_uuid=True), ForeignKey("memories.memory_id"), nullable=False),
        Column("link_type", Text, nullable=False),
        Column("strength", Float),
        Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        _ts(),
        CheckConstraint(_in("link_type", LINK_TYPES), name="ck_memory_links_type"),
        UniqueConstraint("source_id", "target_id", "link_type", name="uq_memory_links"),
        Index("ix_memory_links_target", "target_id"),
    )

    Table(  # revision 0022: a memory's claim on a slot; a newer one retires it, kept
        "claims",
        md,
        _uuid_pk("claim_id"),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id"), nullable=False),
        Column("memory_id", UUID(as_uuid=True),
               ForeignKey("memories.memory_id", ondelete="CASCADE"), nullable=False),
        Column("subject", Text, nullable=False),
        Column("slot", Text, nullable=False),
        Column("value", Text, nullable=False),
        Column("status", Text, nullable=False, server_default="current"),
        Column("valid_from", DateTime(timezone=True), nullable=False),
        _ts("retired_at", nullable=True),
        Column("retired_by", UUID(as_uuid=True),
               ForeignKey("memories.memory_id", ondelete="SET NULL")),
        Column("detector", Text, nullable=False),
        _ts(),
        CheckConstraint(_in("status", CLAIM_STATUSES), name="ck_claims_status"),
        CheckConstraint(
            "(status = 'current' AND retired_at IS NULL AND retired_by IS NULL) "
            "OR (status = 'retired' AND retired_at IS NOT NULL)", name="ck_claims_retired"),
        CheckConstraint("retired_by IS DISTINCT FROM memory_id", name="ck_claims_not_self"),
        UniqueConstraint("memory_id", "slot", name="uq_claims_memory_slot"),
        # one current claim per (user, subject, slot)
        Index("ux_claims_current", "user_id", "subject", "slot", unique=True,
              postgresql_where=text("status = 'current'")),
        Index("ix_claims_slot_history", "user_id", "subject", "slot", "valid_from"),
        Index("ix_claims_retired_by", "retired_by"),
    )

    _episodes_contradictions(md)

    Table(  # revision 0024: the user's profile, from their own words; a newer statement
        # on a slot retires the current one, kept (agent/services/memory/profile.py)
        "profile_claims",
        md,
        _uuid_pk("claim_id"),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id"), nullable=False),
        Column("kind", Text, nullable=False),
        Column("slot", Text, nullable=False),
        Column("value", Text, nullable=False),
        Column("source_entry_id", UUID(as_uuid=True), nullable=False),
        Column("said_at", DateTime(timezone=True), nullable=False),
        Column("status", Text, nullable=False, server_default="current"),
        _ts("retired_at", nullable=True),
        Column("retired_by", UUID(as_uuid=True),
               ForeignKey("profile_claims.claim_id", ondelete="SET NULL")),
        Column("detector", Text, nullable=False),
        _ts(),
        CheckConstraint(_in("kind", PROFILE_KINDS), name="ck_profile_claims_kind"),
        CheckConstraint("slot = kind OR (starts_with(slot, kind || ':') "
                        "AND length(slot) > length(kind) + 1)",
                        name="ck_profile_claims_slot"),
        CheckConstraint("length(value) BETWEEN 1 AND 200", name="ck_profile_claims_value"),
        CheckConstraint(_in("status", CLAIM_STATUSES), name="ck_profile_claims_status"),
        CheckConstraint(
            "(status = 'current' AND retired_at IS NULL AND retired_by IS NULL) "
            "OR (status = 'retired' AND retired_at IS NOT NULL)",
            name="ck_profile_claims_retired"),
        CheckConstraint("retired_by IS DISTINCT FROM claim_id",
                        name="ck_profile_claims_not_self"),
        UniqueConstraint("source_entry_id", "slot", name="uq_profile_claims_turn_slot"),
        Index("ux_profile_claims_current", "user_id", "slot", unique=True,
              postgresql_where=text("status = 'current'")),
        Index("ix_profile_claims_history", "user_id", "slot", "said_at"),
        Index("ix_profile_claims_retired_by", "retired_by"),
    )

    for layer, pk in (("identity", "trait_id"), ("goals", "goal_id")):
        extra: list[Any] = (
            [Column("is_boundary", Boolean, nullable=False, server_default=text("false"))]
            if layer == "identity"
            else [
                Column("evidence_count", Integer, nullable=False, server_default="0"),
                Column("status", Text, nullable=False, server_default="active"),
                _ts("last_reinforced_at", nullable=True),
                # revision 0005: compulsion safety's utility check, and provenance
                Column("actions", Integer, nullable=False, server_default="0"),
                Column("useful_actions", Integer, nullable=False, server_default="0"),
                Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
                # revision 0019: the user a promoted goal belongs to (NULL: every user's)
                _user_col(),
                Index("ix_goals_user_status", "user_id", "status"),
            ]
        )
        Table(
            layer,
            md,
            _uuid_pk(pk),
            Column("name", Text, nullable=False, unique=True),
            Column("description", Text, nullable=False, server_default=""),
            Column("weight", Float, nullable=False),
            Column("source", Text, nullable=False, server_default="config"),
            *extra,
            _ts(),
            Column(
                "updated_at", DateTime(timezone=True), nullable=False, server_default=text("now()")
            ),
            CheckConstraint("weight >= 0 AND weight <= 1", name=f"ck_{layer}_weight"),
        )
        Table(
            f"{layer}_history",
            md,
            _serial_pk(),
            Column(pk, UUID(as_uuid=True), ForeignKey(f"{layer}.{pk}"), nullable=False),
            Column("old_weight", Float),
            Column("new_weight", Float),
            Column("reason", Text, nullable=False),
            Column("proposal_id", UUID(as_uuid=True), ForeignKey("proposals.proposal_id")),
            Column("details", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
            _ts("changed_at"),
            Index(f"ix_{layer}_history_{pk}", pk),
        )

    Table(
        "proposals",
        md,
        _uuid_pk("proposal_id"),
        Column("target_layer", Integer, nullable=False),
        Column("kind", Text, nullable=False),
        Column("payload", JSONB, nullable=False),
        Column("evidence", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
        Column("status", Text, nullable=False, server_default="pending"),
        _ts(),
        _ts("decided_at", nullable=True),
        Column("decided_by", Text),
        CheckConstraint(
            _in("status", ("pending", "approved", "rejected")), name="ck_proposals_status"
        ),
        CheckConstraint("target_layer IN (0, 1)", name="ck_proposals_layer"),
    )

    Table(
        "intentions",
        md,
        _uuid_pk("intention_id"),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id")),
        Column(
            "source_entry_id",
            UUID(as_uuid=True),
            ForeignKey("day_table.entry_id", ondelete="SET NULL"),
        ),
        Column("kind", Text, nullable=False),
        Column("content", Text, nullable=False),
        _ts("due_at", nullable=True),
        Column("carried_count", Integer, nullable=False, server_default="0"),
        Column("urgency", Float, nullable=False, server_default="0.5"),
        Column("status", Text, nullable=False, server_default="open"),
        _ts(),
        Column("updated_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
        Column("last_carried_session", UUID(as_uuid=True)),  # revision 0005
        # revision 0014: the lifecycle (open -> fulfilled / dropped) and a topic vector
        _ts("resolved_at", nullable=True),
        Column("resolved_by_entry_id", UUID(as_uuid=True),
               ForeignKey("day_table.entry_id", ondelete="SET NULL")),
        Column("resolution", JSONB),
        Column("universal_embedding", universal),
        _ts("last_surfaced_at", nullable=True),
        CheckConstraint("(status = 'open') = (resolved_at IS NULL)",
                        name="ck_intentions_resolved"),
        CheckConstraint(
            _in("kind", ("plan", "promise", "reminder", "unfinished")), name="ck_intentions_kind"
        ),
        Index("uq_intentions_source_entry", "source_entry_id", unique=True),
        CheckConstraint(
            _in("status", INTENTION_STATUSES), name="ck_intentions_status"
        ),
        Index("ix_intentions_user_status", "user_id", "status"),
    )

    Table(
        "night_cycle_runs",
        md,
        _serial_pk("run_id"),
        Column("started_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
        _ts("finished_at", nullable=True),
        Column("status", Text, nullable=False, server_default="running"),
        Column("stage", Integer, nullable=False, server_default="0"),
        Column("checkpoints", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("summary", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("error", Text),
        CheckConstraint(
            _in("status", ("running", "done", "failed")), name="ck_night_cycle_runs_status"
        ),
    )

    # revision 0021: each user's morning brief of a run (the run's brief.md on disk is
    # the operator's, read by the CLI only); written once per run and user
    Table(
        "night_briefs",
        md,
        Column("run_id", BigInteger, ForeignKey("night_cycle_runs.run_id"), nullable=False),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id"), nullable=False),
        Column("content", Text, nullable=False),
        _ts(),
        PrimaryKeyConstraint("run_id", "user_id", name="pk_night_briefs"),
        Index("ix_night_briefs_user", "user_id", "run_id"),
    )

    Table(
        "preoccupation_centroids",
        md,
        _uuid_pk("centroid_id"),
        Column("label", Text, nullable=False),
        Column("centroid", universal, nullable=False),
        Column("kind", Text, nullable=False, server_default="founding"),
        Column("status", Text, nullable=False, server_default="active"),
        Column("weight", Float, nullable=False, server_default="1.0"),
        Column("member_count", Integer, nullable=False, server_default="0"),
        Column("parent_ids", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
        _ts(),
        _ts("retired_at", nullable=True),
        CheckConstraint(
            _in("kind", ("founding", "satellite", "fused")), name="ck_centroids_kind"
        ),
        CheckConstraint(_in("status", ("active", "retired")), name="ck_centroids_status"),
    )

    Table(
        "holographic_blocks",
        md,
        _uuid_pk("block_id"),
        Column("prose", JSONB, nullable=False),
        Column("native_embedding", native),
        Column("native_model", Text),
        Column("universal_embedding", universal),
        Column("flux_metrics", JSONB, nullable=False),
        Column("salience_scores", JSONB, nullable=False),
        Column("coherence_gain", Float, nullable=False),
        Column("ties_merge_weight", Float, nullable=False),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id"), nullable=False),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),
        Column("user_tier", Text),
        Column("run_id", BigInteger, ForeignKey("night_cycle_runs.run_id")),
        Column("arc_start_time", DateTime(timezone=True), nullable=False),
        Column("arc_end_time", DateTime(timezone=True), nullable=False),
        _ts(),
        _ts("last_accessed", nullable=True),
        Column("vector_history", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
        Column(
            "parent_metablock_id", UUID(as_uuid=True), ForeignKey("holographic_blocks.block_id")
        ),
        Column(
            "session_continuity_flag", Boolean, nullable=False, server_default=text("false")
        ),
        Column("continues_from", UUID(as_uuid=True), ForeignKey("holographic_blocks.block_id")),
        Column("continued_by", UUID(as_uuid=True), ForeignKey("holographic_blocks.block_id")),
        Column("citations", JSONB),
        Column(
            "preoccupation_centroid_id",
            UUID(as_uuid=True),
            ForeignKey("preoccupation_centroids.centroid_id"),
        ),
        Column("derived_from", UUID(as_uuid=True), ForeignKey("holographic_blocks.block_id")),
        Column("migrated_at", DateTime(timezone=True)),
        *_index_columns(),
        Index("ix_holographic_blocks_session_id", "session_id"),
        Index("ix_holographic_blocks_index_version", "index_version"),
        Index("ix_holographic_blocks_user_id", "user_id"),
        Index("ix_holographic_blocks_coherence", "coherence_gain"),
        Index("ix_holographic_blocks_centroid", "preoccupation_centroid_id"),
        Index("ix_holographic_blocks_last_accessed", "last_accessed"),
        _hnsw("holographic_blocks", "universal_embedding", "vector_cosine_ops"),
        _hnsw("holographic_blocks", "native_embedding", "halfvec_cosine_ops"),
    )

    Table(
        "block_relationships",
        md,
        _uuid_pk("relationship_id"),
        Column(
            "source_block_id",
            UUID(as_uuid=True),
            ForeignKey("holographic_blocks.block_id"),
            nullable=False,
        ),
        Column(
            "target_block_id",
            UUID(as_uuid=True),
            ForeignKey("holographic_blocks.block_id"),
            nullable=False,
        ),
        Column("relationship_type", Text, nullable=False),
        Column("strength", Float),
        _ts(),
        CheckConstraint(
            _in("relationship_type", ("cites", "continues", "derived_from", "thematic")),
            name="ck_block_relationships_type",
        ),
        Index("ix_block_relationships_source", "source_block_id"),
        Index("ix_block_relationships_target", "target_block_id"),
        Index("ix_block_relationships_type", "relationship_type"),
    )

    Table(
        "gate_decisions",
        md,
        _uuid_pk("decision_id"),
        Column("gate", Text, nullable=False),
        Column(
            "entry_id", UUID(as_uuid=True), ForeignKey("day_table.entry_id", ondelete="SET NULL")
        ),
        Column("scratch_id", BigInteger, ForeignKey("scratch_buffer.id")),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id")),
        Column("decision", Text, nullable=False),
        Column("score", Float),
        Column("signals", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("reason", Text, nullable=False, server_default=""),
        Column("memory_id", UUID(as_uuid=True), ForeignKey("memories.memory_id")),
        Column("outcome", JSONB),
        _ts("outcome_at", nullable=True),
        _ts(),
        CheckConstraint(_in("gate", ("entry", "exit")), name="ck_gate_decisions_gate"),
        CheckConstraint(
            _in("decision", ("keep", "drop", "flag", "scratch", "pass")),
            name="ck_gate_decisions_decision",
        ),
        Index("ix_gate_decisions_created", "gate", "created_at"),
        Index("ix_gate_decisions_entry_id", "entry_id"),  # revision 0006
        # one entry-gate decision per turn (revision 0026: the bulk import's "nothing twice")
        Index("ux_gate_decisions_entry", "entry_id", unique=True,
              postgresql_where=text("gate = 'entry'")),
    )

    Table(
        "recall_log",
        md,
        _serial_pk(),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id")),
        Column(
            "entry_id", UUID(as_uuid=True), ForeignKey("day_table.entry_id", ondelete="SET NULL")
        ),
        Column("query", Text, nullable=False),
        Column("verdict", Text, nullable=False),
        Column("items", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
        Column("latency_ms", Float),
        _ts(),
        CheckConstraint(
            _in("verdict", ("strong_match", "weak_match", "no_match")), name="ck_recall_verdict"
        ),
        Index("ix_recall_log_created", "created_at"),
        Index("ix_recall_log_entry_id", "entry_id"),  # revision 0006
    )

    Table(
        "consolidation_log",
        md,
        _serial_pk(),
        Column("pass_id", UUID(as_uuid=True), nullable=False),
        Column("operation", Text, nullable=False),
        Column("inputs", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("outputs", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        _ts(),
        Index("ix_consolidation_log_pass", "pass_id"),
    )

    Table(
        "thoughts",
        md,
        _uuid_pk("thought_id"),
        Column("kind", Text, nullable=False),
        Column("content", Text, nullable=False),
        Column("theme", Text),
        Column("source_ids", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id")),
        Column("status", Text, nullable=False, server_default="new"),
        _ts(),
        _ts("injected_at", nullable=True),
        CheckConstraint(
            _in(
                "kind",
                THOUGHT_KINDS,
            ),
            name="ck_thoughts_kind",
        ),
        Index("ix_thoughts_status", "status", "created_at"),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),  # revision 0014
        Index("ix_thoughts_user_kind", "user_id", "kind", "status"),
        Column("confidence", Float),  # revision 0015: the night's thoughts (low offline)
    )

    _thinking_layer(md, universal)

    # revision 0014: the session handoff's continuation note, one per session
    Table(
        "continuation_notes",
        md,
        _uuid_pk("note_id"),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id"),
               nullable=False),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),
        Column("content", Text, nullable=False),
        Column("source_ids", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
        Column("detector", Text, nullable=False),
        _ts("last_turn_at", nullable=True),
        _ts(),
        Column("updated_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
        Index("uq_continuation_notes_session", "session_id", unique=True),
        Index("ix_continuation_notes_user", "user_id", "updated_at"),
    )

    # revision 0014: the emotional state after each turn (seed 000 §3), per user
    Table(
        "emotional_state",
        md,
        _serial_pk(),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),
        Column("entry_id", UUID(as_uuid=True),
               ForeignKey("day_table.entry_id", ondelete="SET NULL")),
        Column("valence", Float, nullable=False),
        Column("energy", Float, nullable=False),
        Column("openness", Float, nullable=False),
        Column("label", Text),
        Column("detector", Text, nullable=False),
        Column("signals", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        _ts(),
        CheckConstraint("valence >= -1 AND valence <= 1", name="ck_emotional_state_valence"),
        CheckConstraint("energy >= 0 AND energy <= 1", name="ck_emotional_state_energy"),
        CheckConstraint("openness >= 0 AND openness <= 1", name="ck_emotional_state_openness"),
        Index("ix_emotional_state_user", "user_id", "created_at"),
        Index("uq_emotional_state_entry", "entry_id", unique=True),
    )

    Table(
        "inbox",
        md,
        _serial_pk(),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id"), nullable=False),
        Column("content", Text, nullable=False),
        Column("status", Text, nullable=False, server_default="pending"),
        Column("claimed_by", Text),
        _ts("claimed_at", nullable=True),
        _ts("processed_at", nullable=True),
        Column("error", Text),
        _ts(),
        Column("partial_reply", Text),  # revision 0004: streamed text so far
        Column("stream", Boolean, nullable=False, server_default=text("false")),
        _ts("lease_until", nullable=True),  # revision 0008: the claim's owner renews it
        Column("idempotency_key", Text),  # revision 0008: a client's resend is recognised
        # revision 0020: claims so far (the claim counts itself); past [process]
        # inbox_max_attempts the message is failed with its reason, not answered again
        Column("attempts", Integer, nullable=False, server_default=text("0")),
        CheckConstraint(
            _in("status", ("pending", "processing", "done", "failed")), name="ck_inbox_status"
        ),
        CheckConstraint("attempts >= 0", name="ck_inbox_attempts"),
        CheckConstraint("status <> 'failed' OR error IS NOT NULL",
                        name="ck_inbox_failed_reason"),
        Index("ix_inbox_pending", "status", "id"),
        Index("ux_inbox_idempotency_key", "idempotency_key", unique=True,
              postgresql_where=text("idempotency_key IS NOT NULL")),
    )

    Table(
        "outbox",
        md,
        _serial_pk(),
        Column("inbox_id", BigInteger, ForeignKey("inbox.id")),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id"), nullable=False),
        Column("content", Text, nullable=False),
        Column("metadata", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        _ts(),
        _ts("delivered_at", nullable=True),
        Index("ix_outbox_session", "session_id", "id"),
        Index("ux_outbox_inbox", "inbox_id", unique=True,  # revision 0008: one reply each
              postgresql_where=text("inbox_id IS NOT NULL")),
    )

    Table(
        "process_heartbeats",
        md,
        _serial_pk(),
        Column("name", Text, nullable=False),
        Column("pid", Integer, nullable=False),
        Column("host", Text, nullable=False),
        Column("started_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
        Column("last_beat", DateTime(timezone=True), nullable=False, server_default=text("now()")),
        Column("state", Text, nullable=False, server_default="starting"),
        Column("info", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        UniqueConstraint("host", "pid", "name", name="uq_process_heartbeats"),
    )

    Table(
        "audit_log",
        md,
        _serial_pk(),
        _ts("at"),
        Column("actor", Text, nullable=False),
        Column("action", Text, nullable=False),
        Column("target", Text),
        Column("details", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("prev_hash", Text),  # revision 0009: the hash chain (cogd audit verify)
        Column("row_hash", Text),
    )

    Table(
        "llm_calls",
        md,
        _serial_pk(),
        _ts(),
        Column("provider", Text, nullable=False),
        Column("model", Text, nullable=False),
        Column("role", Text, nullable=False),
        Column("kind", Text, nullable=False),
        Column("tokens_in", Integer, nullable=False, server_default="0"),
        Column("tokens_out", Integer, nullable=False, server_default="0"),
        Column("latency_ms", Float, nullable=False),
        Column("ok", Boolean, nullable=False),
        Column("error", Text),
        Column("attempts", Integer, nullable=False, server_default="1"),
        CheckConstraint(
            _in("kind", ("chat", "stream", "embed", "rerank")), name="ck_llm_calls_kind"
        ),
        Index("ix_llm_calls_created", "created_at"),
    )

    # revision 0005: consolidation and DMN state
    Table(
        "worker_state",
        md,
        Column("key", Text, primary_key=True),
        Column("value", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("updated_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    )

    Table(
        "gut_signals",
        md,
        _serial_pk(),
        _ts(),
        Column("delta_norm", Float, nullable=False),
        Column("delta", universal, nullable=False),
        Column("layers", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("action", Text, nullable=False),
        Column("outcome", JSONB),
        _ts("outcome_at", nullable=True),
        Index("ix_gut_signals_created", "created_at"),
    )

    # revision 0004: the cognitive loop's records
    Table(
        "memory_citations",
        md,
        _serial_pk(),
        Column("entry_id", UUID(as_uuid=True),
               ForeignKey("day_table.entry_id", ondelete="SET NULL")),
        Column("cited_id", UUID(as_uuid=True), nullable=False),
        Column("cited_kind", Text),
        Column("valid", Boolean, nullable=False),
        _ts(),
        UniqueConstraint("entry_id", "cited_id", name="uq_memory_citations"),
        Index("ix_memory_citations_cited", "cited_id"),
    )

    Table(
        "escalations",
        md,
        _serial_pk(),
        Column("entry_id", UUID(as_uuid=True),
               ForeignKey("day_table.entry_id", ondelete="SET NULL")),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id")),
        Column("triggers", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
        Column("stakes", JSONB, nullable=False, server_default=text("'[]'::jsonb")),
        Column("monitors", JSONB, nullable=False, server_default=text("'{}'::jsonb")),
        Column("loops", Integer, nullable=False, server_default="0"),
        Column("outcome", Text, nullable=False, server_default=""),
        _ts(),
        Index("ix_escalations_created", "created_at"),
        Index("ix_escalations_entry_id", "entry_id"),  # revision 0006
    )

    # the BM25 lexicon (revision 0007): postings maintained by triggers from index_tsv
    Table(
        "lexical_postings",
        md,
        Column("kind", Text, nullable=False),
        Column("term", Text, nullable=False),
        Column("doc_id", UUID(as_uuid=True), nullable=False),
        Column("user_id", UUID(as_uuid=True)),
        Column("dated", DateTime(timezone=True)),
        Column("tf", Integer, nullable=False),
        Column("doc_len", Integer, nullable=False),
        # the BM25 term-frequency part at write time: the top-k read order (revision 0012)
        Column("impact", REAL, nullable=False),
        PrimaryKeyConstraint("kind", "term", "doc_id", name="pk_lexical_postings"),
        CheckConstraint("kind IN ('day_table', 'memory', 'block')",
                        name="ck_lexical_postings_kind"),
        Index("ix_lexical_postings_doc", "kind", "doc_id"),
        Index("ix_lexical_postings_top", "kind", "term", "user_id", text("impact DESC"),
              postgresql_include=["doc_id", "tf", "doc_len", "dated"]),
    )
    # bearer tokens of the HTTP API, one user each; only the token's SHA-256 is kept
    # (revision 0013)
    Table(
        "api_tokens",
        md,
        _uuid_pk("token_id"),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id"), nullable=False),
        Column("name", Text, nullable=False, server_default=""),
        Column("prefix", Text, nullable=False),
        Column("token_hash", Text, nullable=False),
        _ts(),
        _ts("last_used_at", nullable=True),
        _ts("revoked_at", nullable=True),
        # revision 0021: an operator token also sees installation-wide figures (status)
        Column("operator", Boolean, nullable=False, server_default=text("false")),
        CheckConstraint("token_hash ~ '^[0-9a-f]{64}$'", name="ck_api_tokens_hash"),
        Index("uq_api_tokens_hash", "token_hash", unique=True),
        Index("ix_api_tokens_user", "user_id"),
        # revision 0027: what console_sessions' (token_id, user_id) foreign key points at
        Index("uq_api_tokens_token_user", "token_id", "user_id", unique=True),
    )
    Table(  # revision 0028: the night cycle's per-turn flux flags (seed 001 §2), beside
        # day_table so that stage 1 does not rewrite each wide row and its HNSW entries
        "day_flux",
        md,
        Column("entry_id", UUID(as_uuid=True),
               ForeignKey("day_table.entry_id", ondelete="CASCADE"), primary_key=True),
        Column("surprise", Float),
        Column("flux_state", Text),
        _ts("written_at"),
        CheckConstraint(f"flux_state IS NULL OR {_in('flux_state', FLUX_STATES)}",
                        name="ck_day_flux_state"),
    )
    Table(  # revision 0027: web console logins (agent/commands/console), the secret hashed
        "console_sessions",
        md,
        _uuid_pk("session_id"),
        Column("secret_hash", Text, nullable=False),
        Column("token_id", UUID(as_uuid=True), nullable=False),
        Column("user_id", UUID(as_uuid=True), nullable=False),
        Column("csrf_secret", Text, nullable=False),
        _ts(),
        Column("expires_at", DateTime(timezone=True), nullable=False),
        _ts("revoked_at", nullable=True),
        Column("ended_by", Text),
        Column("user_agent", Text, nullable=False, server_default=""),
        ForeignKeyConstraint(["token_id", "user_id"],
                             ["api_tokens.token_id", "api_tokens.user_id"],
                             name="fk_console_sessions_token_user"),
        CheckConstraint("secret_hash ~ '^[0-9a-f]{64}$'", name="ck_console_sessions_hash"),
        CheckConstraint("length(csrf_secret) >= 32", name="ck_console_sessions_csrf"),
        CheckConstraint("expires_at > created_at", name="ck_console_sessions_expiry"),
        CheckConstraint("(revoked_at IS NULL) = (ended_by IS NULL) AND "
                        "(ended_by IS NULL OR ended_by IN ('logout', 'relogin', 'token_revoked'))",
                        name="ck_console_sessions_ended"),
        Index("uq_console_sessions_hash", "secret_hash", unique=True),
        Index("ix_console_sessions_token", "token_id"),
        Index("ix_console_sessions_user", "user_id"),
    )
    # each term's document frequency, kept by the same triggers (revision 0012)
    Table(
        "lexical_terms",
        md,
        Column("kind", Text, nullable=False),
        Column("term", Text, nullable=False),
        Column("df", BigInteger, nullable=False),
        PrimaryKeyConstraint("kind", "term", name="pk_lexical_terms"),
        CheckConstraint("kind IN ('day_table', 'memory', 'block')",
                        name="ck_lexical_terms_kind"),
        CheckConstraint("df >= 0", name="ck_lexical_terms_df"),
    )
    Table(
        "lexical_stats",
        md,
        Column("kind", Text, primary_key=True),
        Column("n_docs", BigInteger, nullable=False, server_default="0"),
        Column("total_len", BigInteger, nullable=False, server_default="0"),
    )

    return md


def _user_col() -> Column:
    return Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id"))


def _entry_col(name: str) -> Column:
    return Column(name, UUID(as_uuid=True), ForeignKey("day_table.entry_id", ondelete="SET NULL"))


def _episodes_contradictions(md: MetaData) -> None:
    """Revision 0025: contradiction resolutions (seed 000 §4.5.3), episodes and milestones
    (seed 000 §4.3, §4.6.3)."""
    Table(  # one resolution per flagged link: a second resolve is refused by the key
        "contradiction_resolutions", md, _serial_pk("resolution_id"),
        Column("link_id", BigInteger, ForeignKey("memory_links.id", ondelete="CASCADE"),
               nullable=False),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),
        Column("action", Text, nullable=False),
        Column("kept_id", UUID(as_uuid=True),
               ForeignKey("memories.memory_id", ondelete="CASCADE"), nullable=False),
        Column("superseded", ARRAY(UUID(as_uuid=True)), nullable=False),
        Column("how", Text, nullable=False),
        Column("actor", Text, nullable=False),
        _ts(),
        CheckConstraint(_in("action", RESOLUTION_ACTIONS),
                        name="ck_contradiction_resolutions_action"),
        CheckConstraint("cardinality(superseded) >= 1",
                        name="ck_contradiction_resolutions_superseded"),
        UniqueConstraint("link_id", name="uq_contradiction_resolutions_link"),
    )
    Table(
        "episodes", md,
        Column("episode_id", UUID(as_uuid=True), primary_key=True),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),
        Column("session_ids", ARRAY(UUID(as_uuid=True)), nullable=False),
        Column("started_at", DateTime(timezone=True), nullable=False),
        Column("ended_at", DateTime(timezone=True), nullable=False),
        Column("title", Text, nullable=False),
        Column("titled_by", Text, nullable=False),
        Column("terms", ARRAY(Text), nullable=False, server_default=text("'{}'")),
        Column("source_entry_ids", ARRAY(UUID(as_uuid=True)), nullable=False),
        Column("detector", Text, nullable=False),
        Column("run_id", BigInteger, ForeignKey("night_cycle_runs.run_id")),
        _ts(),
        CheckConstraint("ended_at >= started_at", name="ck_episodes_span"),
        Index("ix_episodes_user_started", "user_id", "started_at"),
    )
    Table(  # a block is in one episode at most
        "episode_blocks", md,
        Column("block_id", UUID(as_uuid=True),
               ForeignKey("holographic_blocks.block_id", ondelete="CASCADE"),
               primary_key=True),
        Column("episode_id", UUID(as_uuid=True),
               ForeignKey("episodes.episode_id", ondelete="CASCADE"), nullable=False),
        Index("ix_episode_blocks_episode", "episode_id"),
    )
    Table(
        "milestones", md, _uuid_pk("milestone_id"),
        Column("episode_id", UUID(as_uuid=True),
               ForeignKey("episodes.episode_id", ondelete="CASCADE"), nullable=False),
        Column("user_id", UUID(as_uuid=True), ForeignKey("users.user_id")),
        Column("kind", Text, nullable=False),
        Column("key", Text, nullable=False),
        Column("content", Text, nullable=False),
        Column("at", DateTime(timezone=True), nullable=False),
        Column("importance", Float, nullable=False),
        Column("source_entry_id", UUID(as_uuid=True),
               ForeignKey("day_table.entry_id", ondelete="SET NULL")),
        Column("detector", Text, nullable=False),
        _ts(),
        CheckConstraint(_in("kind", MILESTONE_KINDS), name="ck_milestones_kind"),
        CheckConstraint("importance >= 0 AND importance <= 1",
                        name="ck_milestones_importance"),
        # a first mention (or any milestone key) is recorded once per user
        Index("ux_milestones_key", "user_id", "kind", "key", unique=True,
              postgresql_nulls_not_distinct=True),
        Index("ix_milestones_episode", "episode_id"),
    )


def _list_col(name: str, default: str = "[]") -> Column:
    return Column(name, JSONB, nullable=False, server_default=text(f"'{default}'::jsonb"))


def _thinking_layer(md: MetaData, universal: Vector) -> None:
    """Revision 0015: models, evidence, predictions, principles, workflows, decisions, the
    problem queue and the self-model test (seed 000 §8, §9.5, §10; seed 003)."""
    Table(
        "cognitive_models", md, _uuid_pk("model_id"), _user_col(),
        Column("statement", Text, nullable=False),
        Column("domain", Text, nullable=False, server_default="general"),
        Column("confidence", Float, nullable=False, server_default="0.5"),
        Column("status", Text, nullable=False, server_default="active"),
        Column("check_count", Integer, nullable=False, server_default="0"),
        Column("strengthen_count", Integer, nullable=False, server_default="0"),
        Column("weaken_count", Integer, nullable=False, server_default="0"),
        Column("universal_embedding", universal),
        Column("detector", Text, nullable=False),
        _ts(), _ts("updated_at"), _ts("last_checked_at", nullable=True),
        CheckConstraint(_in("domain", MODEL_DOMAINS), name="ck_cognitive_models_domain"),
        CheckConstraint("confidence >= 0 AND confidence <= 0.95",
                        name="ck_cognitive_models_confidence"),
        CheckConstraint(_in("status", MODEL_STATUSES), name="ck_cognitive_models_status"),
        Index("ix_cognitive_models_user_status", "user_id", "status"),
    )
    Table(
        "model_evidence", md, _serial_pk(),
        Column("model_id", UUID(as_uuid=True),
               ForeignKey("cognitive_models.model_id", ondelete="CASCADE"), nullable=False),
        Column("memory_id", UUID(as_uuid=True),
               ForeignKey("memories.memory_id", ondelete="SET NULL")),
        _entry_col("entry_id"),
        Column("direction", Text, nullable=False),
        Column("note", Text),
        Column("confidence_before", Float, nullable=False),
        Column("confidence_after", Float, nullable=False),
        Column("detector", Text, nullable=False),
        _ts(),
        CheckConstraint(_in("direction", ("supports", "contradicts", "invalidates")),
                        name="ck_model_evidence_direction"),
        Index("ix_model_evidence_model", "model_id"),
        Index("uq_model_evidence_memory", "model_id", "memory_id", unique=True,
              postgresql_where=text("memory_id IS NOT NULL")),
    )
    Table(
        "predictions", md, _uuid_pk("prediction_id"), _user_col(),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id")),
        Column("statement", Text, nullable=False),
        Column("domain", Text, nullable=False, server_default="general"),
        Column("confidence", Float, nullable=False, server_default="0.5"),
        _ts("deadline", nullable=True),
        Column("made_by", Text, nullable=False),
        _entry_col("source_entry_id"),
        Column("source_model_id", UUID(as_uuid=True),
               ForeignKey("cognitive_models.model_id", ondelete="SET NULL")),
        Column("status", Text, nullable=False, server_default="pending"),
        _ts("settled_at", nullable=True),
        _entry_col("settled_by_entry_id"),
        Column("settlement", JSONB),
        Column("universal_embedding", universal),
        Column("detector", Text, nullable=False),
        _ts(),
        CheckConstraint(_in("domain", MODEL_DOMAINS), name="ck_predictions_domain"),
        CheckConstraint("confidence >= 0 AND confidence <= 1", name="ck_predictions_confidence"),
        CheckConstraint(_in("made_by", ("agent", "user")), name="ck_predictions_made_by"),
        CheckConstraint(_in("status", PREDICTION_STATUSES), name="ck_predictions_status"),
        CheckConstraint("(status = 'pending') = (settled_at IS NULL)",
                        name="ck_predictions_settled"),
        Index("ix_predictions_user_status", "user_id", "status"),
        Index("uq_predictions_source_entry", "source_entry_id", unique=True,
              postgresql_where=text("source_entry_id IS NOT NULL")),
    )
    Table(
        "principles", md, _uuid_pk("principle_id"), _user_col(),
        Column("statement", Text, nullable=False),
        Column("confidence", Float, nullable=False, server_default="0.5"),
        Column("status", Text, nullable=False, server_default="active"),
        _list_col("source_ids"),
        Column("confirm_count", Integer, nullable=False, server_default="0"),
        Column("challenge_count", Integer, nullable=False, server_default="0"),
        Column("universal_embedding", universal),
        Column("proposal_id", UUID(as_uuid=True), ForeignKey("proposals.proposal_id")),
        Column("detector", Text, nullable=False),
        _ts(), _ts("updated_at"),
        CheckConstraint("confidence >= 0 AND confidence <= 0.95",
                        name="ck_principles_confidence"),
        CheckConstraint(_in("status", PRINCIPLE_STATUSES), name="ck_principles_status"),
        Index("ix_principles_user_status", "user_id", "status"),
    )
    Table(
        "workflows", md, _uuid_pk("workflow_id"), _user_col(),
        Column("name", Text, nullable=False),
        Column("trigger", Text, nullable=False),
        _list_col("steps"),
        Column("domain", Text, nullable=False, server_default="general"),
        Column("confidence", Float, nullable=False, server_default="0.5"),
        Column("status", Text, nullable=False, server_default="active"),
        Column("times_matched", Integer, nullable=False, server_default="0"),
        Column("times_completed", Integer, nullable=False, server_default="0"),
        Column("times_skipped", Integer, nullable=False, server_default="0"),
        _list_col("source_sessions"),
        Column("signature", Text, nullable=False),
        Column("universal_embedding", universal),
        Column("detector", Text, nullable=False),
        _ts(), _ts("updated_at"), _ts("last_matched_at", nullable=True),
        CheckConstraint("confidence >= 0 AND confidence <= 0.95", name="ck_workflows_confidence"),
        CheckConstraint(_in("status", ("active", "retired")), name="ck_workflows_status"),
        Index("uq_workflows_user_signature", "user_id", "signature", unique=True),
    )
    Table(
        "decisions", md, _uuid_pk("decision_id"), _user_col(),
        Column("session_id", UUID(as_uuid=True), ForeignKey("sessions.session_id")),
        _entry_col("entry_id"),
        Column("memory_id", UUID(as_uuid=True),
               ForeignKey("memories.memory_id", ondelete="SET NULL")),
        Column("decision", Text, nullable=False),
        _list_col("alternatives"),
        Column("rationale", Text),
        Column("outcome", Text),
        _entry_col("outcome_entry_id"),
        Column("assessment", Text),
        Column("lesson", Text),
        Column("universal_embedding", universal),
        Column("detector", Text, nullable=False),
        _ts(), _ts("outcome_at", nullable=True),
        CheckConstraint("assessment IS NULL OR " + _in("assessment", ("win", "loss", "partial")),
                        name="ck_decisions_assessment"),
        Index("ix_decisions_user", "user_id", "created_at"),
        Index("uq_decisions_entry", "entry_id", unique=True,
              postgresql_where=text("entry_id IS NOT NULL")),
    )
    Table(
        "problem_queue", md, _uuid_pk("problem_id"), _user_col(),
        Column("kind", Text, nullable=False),
        Column("content", Text, nullable=False),
        _list_col("source_ids"),
        Column("source_key", Text, nullable=False),
        Column("status", Text, nullable=False, server_default="open"),
        Column("attempts", Integer, nullable=False, server_default="0"),
        Column("last_run_id", BigInteger, ForeignKey("night_cycle_runs.run_id")),
        Column("result_thought_id", UUID(as_uuid=True),
               ForeignKey("thoughts.thought_id", ondelete="SET NULL")),
        _ts(), _ts("updated_at"),
        CheckConstraint(_in("kind", PROBLEM_KINDS), name="ck_problem_queue_kind"),
        CheckConstraint(_in("status", PROBLEM_STATUSES), name="ck_problem_queue_status"),
        Index("uq_problem_queue_source", "source_key", unique=True),
    )
    Table(
        "self_test_runs", md, _serial_pk("run_id"), _ts(),
        Column("scenarios", Integer, nullable=False),
        Column("agreed", Integer, nullable=False),
        Column("agreement", Float, nullable=False),
        Column("model", Text, nullable=False),
        Column("detector", Text, nullable=False),
        _list_col("details", "{}"),
        CheckConstraint("agreed >= 0 AND agreed <= scenarios", name="ck_self_test_runs_agreed"),
    )
    Table(
        "self_test_items", md, _serial_pk(),
        Column("run_id", BigInteger, ForeignKey("self_test_runs.run_id", ondelete="CASCADE"),
               nullable=False),
        Column("scenario", Text, nullable=False),
        _list_col("options"),
        Column("predicted", Text, nullable=False),
        Column("actual", Text, nullable=False),
        Column("agreed", Boolean, nullable=False),
        Index("ix_self_test_items_run", "run_id"),
    )
