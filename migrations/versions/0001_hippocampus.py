"""hippocampus: every table of ARCHITECTURE.md's Storage section.

Embedding dimensions are read from config when this revision runs (never hard-coded):
set embedding.universal_dim / embedding.native_dim before the first `cogd migrate`.

Revision ID: 0001_hippocampus
Revises:
Create Date: 2026-11-23 03:29:33.420429
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op
from pgvector.sqlalchemy import HALFVEC, Vector
from sqlalchemy.dialects import postgresql

revision: str = "0001_hippocampus"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _dims() -> tuple[int, int]:
    settings = context.config.attributes.get("settings")
    if settings is None:
        from agent.config import load_settings

        settings = load_settings()
    return settings.embedding.universal_dim, settings.embedding.native_dim


def upgrade() -> None:
    UNIVERSAL_DIM, NATIVE_DIM = _dims()
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")

    op.create_table(
        "audit_log",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column(
            "at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("target", sa.Text(), nullable=True),
        sa.Column(
            "details",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "consolidation_log",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("pass_id", sa.UUID(), nullable=False),
        sa.Column("operation", sa.Text(), nullable=False),
        sa.Column(
            "inputs",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column(
            "outputs",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_consolidation_log_pass", "consolidation_log", ["pass_id"], unique=False)
    op.create_table(
        "goals",
        sa.Column(
            "goal_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), server_default="", nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("source", sa.Text(), server_default="config", nullable=False),
        sa.Column("evidence_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("status", sa.Text(), server_default="active", nullable=False),
        sa.Column("last_reinforced_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint("weight >= 0 AND weight <= 1", name="ck_goals_weight"),
        sa.PrimaryKeyConstraint("goal_id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "identity",
        sa.Column(
            "trait_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), server_default="", nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("source", sa.Text(), server_default="config", nullable=False),
        sa.Column("is_boundary", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint("weight >= 0 AND weight <= 1", name="ck_identity_weight"),
        sa.PrimaryKeyConstraint("trait_id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "llm_calls",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("provider", sa.Text(), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("tokens_in", sa.Integer(), server_default="0", nullable=False),
        sa.Column("tokens_out", sa.Integer(), server_default="0", nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="1", nullable=False),
        sa.CheckConstraint(
            "kind IN ('chat', 'stream', 'embed', 'rerank')", name="ck_llm_calls_kind"
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_llm_calls_created", "llm_calls", ["created_at"], unique=False)
    op.create_table(
        "night_cycle_runs",
        sa.Column("run_id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.Text(), server_default="running", nullable=False),
        sa.Column("stage", sa.Integer(), server_default="0", nullable=False),
        sa.Column(
            "checkpoints",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column(
            "summary",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column("error", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "status IN ('running', 'done', 'failed')", name="ck_night_cycle_runs_status"
        ),
        sa.PrimaryKeyConstraint("run_id"),
    )
    op.create_table(
        "preoccupation_centroids",
        sa.Column(
            "centroid_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("label", sa.Text(), nullable=False),
        sa.Column("centroid", Vector(UNIVERSAL_DIM), nullable=False),
        sa.Column("kind", sa.Text(), server_default="founding", nullable=False),
        sa.Column("status", sa.Text(), server_default="active", nullable=False),
        sa.Column("weight", sa.Float(), server_default="1.0", nullable=False),
        sa.Column("member_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column(
            "parent_ids",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'[]'::jsonb"),
            nullable=False,
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("kind IN ('founding', 'satellite', 'fused')", name="ck_centroids_kind"),
        sa.CheckConstraint("status IN ('active', 'retired')", name="ck_centroids_status"),
        sa.PrimaryKeyConstraint("centroid_id"),
    )
    op.create_table(
        "process_heartbeats",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("host", sa.Text(), nullable=False),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "last_beat", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
        sa.Column("state", sa.Text(), server_default="starting", nullable=False),
        sa.Column(
            "info",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("host", "pid", "name", name="uq_process_heartbeats"),
    )
    op.create_table(
        "proposals",
        sa.Column(
            "proposal_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("target_layer", sa.Integer(), nullable=False),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column(
            "evidence",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'[]'::jsonb"),
            nullable=False,
        ),
        sa.Column("status", sa.Text(), server_default="pending", nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("decided_by", sa.Text(), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'approved', 'rejected')", name="ck_proposals_status"
        ),
        sa.CheckConstraint("target_layer IN (0, 1)", name="ck_proposals_layer"),
        sa.PrimaryKeyConstraint("proposal_id"),
    )
    op.create_table(
        "users",
        sa.Column(
            "user_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("handle", sa.Text(), nullable=False),
        sa.Column("display_name", sa.Text(), nullable=True),
        sa.Column("tier", sa.Text(), server_default="normal", nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint("tier IN ('normal', 'meso', 'elder')", name="ck_users_tier"),
        sa.PrimaryKeyConstraint("user_id"),
        sa.UniqueConstraint("handle"),
    )
    op.create_table(
        "goals_history",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("goal_id", sa.UUID(), nullable=False),
        sa.Column("old_weight", sa.Float(), nullable=True),
        sa.Column("new_weight", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("proposal_id", sa.UUID(), nullable=True),
        sa.Column(
            "details",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column(
            "changed_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["goal_id"],
            ["goals.goal_id"],
        ),
        sa.ForeignKeyConstraint(
            ["proposal_id"],
            ["proposals.proposal_id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_goals_history_goal_id", "goals_history", ["goal_id"], unique=False)
    op.create_table(
        "identity_history",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("trait_id", sa.UUID(), nullable=False),
        sa.Column("old_weight", sa.Float(), nullable=True),
        sa.Column("new_weight", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("proposal_id", sa.UUID(), nullable=True),
        sa.Column(
            "details",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column(
            "changed_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["proposal_id"],
            ["proposals.proposal_id"],
        ),
        sa.ForeignKeyConstraint(
            ["trait_id"],
            ["identity.trait_id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_identity_history_trait_id", "identity_history", ["trait_id"], unique=False)
    op.create_table(
        "sessions",
        sa.Column(
            "session_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("user_id", sa.UUID(), nullable=False),
        sa.Column("channel", sa.Text(), server_default="cli", nullable=False),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "metadata",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.user_id"],
        ),
        sa.PrimaryKeyConstraint("session_id"),
    )
    op.create_index("ix_sessions_user_id", "sessions", ["user_id"], unique=False)
    op.create_table(
        "holographic_blocks",
        sa.Column(
            "block_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("prose", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("native_embedding", HALFVEC(NATIVE_DIM), nullable=True),
        sa.Column("native_model", sa.Text(), nullable=True),
        sa.Column("universal_embedding", Vector(UNIVERSAL_DIM), nullable=True),
        sa.Column("flux_metrics", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("salience_scores", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("coherence_gain", sa.Float(), nullable=False),
        sa.Column("ties_merge_weight", sa.Float(), nullable=False),
        sa.Column("session_id", sa.UUID(), nullable=False),
        sa.Column("user_id", sa.UUID(), nullable=True),
        sa.Column("user_tier", sa.Text(), nullable=True),
        sa.Column("run_id", sa.BigInteger(), nullable=True),
        sa.Column("arc_start_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column("arc_end_time", sa.DateTime(timezone=True), nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("last_accessed", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "vector_history",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'[]'::jsonb"),
            nullable=False,
        ),
        sa.Column("parent_metablock_id", sa.UUID(), nullable=True),
        sa.Column(
            "session_continuity_flag", sa.Boolean(), server_default=sa.text("false"), nullable=False
        ),
        sa.Column("continues_from", sa.UUID(), nullable=True),
        sa.Column("continued_by", sa.UUID(), nullable=True),
        sa.Column("citations", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("preoccupation_centroid_id", sa.UUID(), nullable=True),
        sa.Column("derived_from", sa.UUID(), nullable=True),
        sa.Column("migrated_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["continued_by"],
            ["holographic_blocks.block_id"],
        ),
        sa.ForeignKeyConstraint(
            ["continues_from"],
            ["holographic_blocks.block_id"],
        ),
        sa.ForeignKeyConstraint(
            ["derived_from"],
            ["holographic_blocks.block_id"],
        ),
        sa.ForeignKeyConstraint(
            ["parent_metablock_id"],
            ["holographic_blocks.block_id"],
        ),
        sa.ForeignKeyConstraint(
            ["preoccupation_centroid_id"],
            ["preoccupation_centroids.centroid_id"],
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["night_cycle_runs.run_id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.user_id"],
        ),
        sa.PrimaryKeyConstraint("block_id"),
    )
    op.create_index(
        "ix_holographic_blocks_centroid",
        "holographic_blocks",
        ["preoccupation_centroid_id"],
        unique=False,
    )
    op.create_index(
        "ix_holographic_blocks_coherence", "holographic_blocks", ["coherence_gain"], unique=False
    )
    op.create_index(
        "ix_holographic_blocks_last_accessed", "holographic_blocks", ["last_accessed"], unique=False
    )
    op.create_index(
        "ix_holographic_blocks_native_embedding_hnsw",
        "holographic_blocks",
        ["native_embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_ops={"native_embedding": "halfvec_cosine_ops"},
    )
    op.create_index(
        "ix_holographic_blocks_session_id", "holographic_blocks", ["session_id"], unique=False
    )
    op.create_index(
        "ix_holographic_blocks_universal_embedding_hnsw",
        "holographic_blocks",
        ["universal_embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_ops={"universal_embedding": "vector_cosine_ops"},
    )
    op.create_index(
        "ix_holographic_blocks_user_id", "holographic_blocks", ["user_id"], unique=False
    )
    op.create_table(
        "inbox",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("session_id", sa.UUID(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), server_default="pending", nullable=False),
        sa.Column("claimed_by", sa.Text(), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("processed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'processing', 'done', 'failed')", name="ck_inbox_status"
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_inbox_pending", "inbox", ["status", "id"], unique=False)
    op.create_table(
        "thoughts",
        sa.Column(
            "thought_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("theme", sa.Text(), nullable=True),
        sa.Column(
            "source_ids",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'[]'::jsonb"),
            nullable=False,
        ),
        sa.Column("session_id", sa.UUID(), nullable=True),
        sa.Column("status", sa.Text(), server_default="new", nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("injected_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "kind IN ('self_prompt', 'creative_impulse', 'proactive_recall', 'discarded')",
            name="ck_thoughts_kind",
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
        ),
        sa.PrimaryKeyConstraint("thought_id"),
    )
    op.create_index("ix_thoughts_status", "thoughts", ["status", "created_at"], unique=False)
    op.create_table(
        "block_relationships",
        sa.Column(
            "relationship_id",
            sa.UUID(),
            server_default=sa.text("gen_random_uuid()"),
            nullable=False,
        ),
        sa.Column("source_block_id", sa.UUID(), nullable=False),
        sa.Column("target_block_id", sa.UUID(), nullable=False),
        sa.Column("relationship_type", sa.Text(), nullable=False),
        sa.Column("strength", sa.Float(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "relationship_type IN ('cites', 'continues', 'derived_from', 'thematic')",
            name="ck_block_relationships_type",
        ),
        sa.ForeignKeyConstraint(
            ["source_block_id"],
            ["holographic_blocks.block_id"],
        ),
        sa.ForeignKeyConstraint(
            ["target_block_id"],
            ["holographic_blocks.block_id"],
        ),
        sa.PrimaryKeyConstraint("relationship_id"),
    )
    op.create_index(
        "ix_block_relationships_source", "block_relationships", ["source_block_id"], unique=False
    )
    op.create_index(
        "ix_block_relationships_target", "block_relationships", ["target_block_id"], unique=False
    )
    op.create_index(
        "ix_block_relationships_type", "block_relationships", ["relationship_type"], unique=False
    )
    op.create_table(
        "day_table",
        sa.Column(
            "entry_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("session_id", sa.UUID(), nullable=False),
        sa.Column("user_id", sa.UUID(), nullable=True),
        sa.Column("user_tier", sa.Text(), nullable=True),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("native_embedding", HALFVEC(NATIVE_DIM), nullable=True),
        sa.Column("native_model", sa.Text(), nullable=True),
        sa.Column("universal_embedding", Vector(UNIVERSAL_DIM), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("perplexity_score", sa.Float(), nullable=True),
        sa.Column("surprise", sa.Float(), nullable=True),
        sa.Column("flux_state", sa.Text(), nullable=True),
        sa.Column("turn_number", sa.Integer(), nullable=True),
        sa.Column("token_count", sa.Integer(), nullable=True),
        sa.Column("message_type", sa.Text(), server_default="dialogue", nullable=False),
        sa.Column("epiphany_metadata", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("inbox_id", sa.BigInteger(), nullable=True),
        sa.Column(
            "content_tsv",
            postgresql.TSVECTOR(),
            sa.Computed("to_tsvector('simple'::regconfig, coalesce(content, ''))", persisted=True),
            nullable=True,
        ),
        sa.CheckConstraint(
            "flux_state IS NULL OR flux_state IN ('baseline', 'spike', 'resolution', 'stable')",
            name="ck_day_table_flux",
        ),
        sa.CheckConstraint(
            "message_type IN ('dialogue', 'internal_monologue', 'epiphany', 'system')",
            name="ck_day_table_message_type",
        ),
        sa.CheckConstraint("role IN ('user', 'assistant', 'system')", name="ck_day_table_role"),
        sa.CheckConstraint(
            "user_tier IS NULL OR user_tier IN ('normal', 'meso', 'elder')",
            name="ck_day_table_tier",
        ),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inbox.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.user_id"],
        ),
        sa.PrimaryKeyConstraint("entry_id"),
    )
    op.create_index(
        "ix_day_table_content_tsv",
        "day_table",
        ["content_tsv"],
        unique=False,
        postgresql_using="gin",
    )
    op.create_index("ix_day_table_created_at", "day_table", ["created_at"], unique=False)
    op.create_index("ix_day_table_message_type", "day_table", ["message_type"], unique=False)
    op.create_index(
        "ix_day_table_native_embedding_hnsw",
        "day_table",
        ["native_embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_ops={"native_embedding": "halfvec_cosine_ops"},
    )
    op.create_index("ix_day_table_session_id", "day_table", ["session_id"], unique=False)
    op.create_index(
        "ix_day_table_universal_embedding_hnsw",
        "day_table",
        ["universal_embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_ops={"universal_embedding": "vector_cosine_ops"},
    )
    op.create_index(
        "ix_day_table_user_created", "day_table", ["user_id", "created_at"], unique=False
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("inbox_id", sa.BigInteger(), nullable=True),
        sa.Column("session_id", sa.UUID(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column(
            "metadata",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inbox.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_outbox_session", "outbox", ["session_id", "id"], unique=False)
    op.create_table(
        "intentions",
        sa.Column(
            "intention_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("user_id", sa.UUID(), nullable=True),
        sa.Column("session_id", sa.UUID(), nullable=True),
        sa.Column("source_entry_id", sa.UUID(), nullable=True),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("carried_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("urgency", sa.Float(), server_default="0.5", nullable=False),
        sa.Column("status", sa.Text(), server_default="open", nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "kind IN ('plan', 'promise', 'reminder', 'unfinished')", name="ck_intentions_kind"
        ),
        sa.CheckConstraint(
            "status IN ('open', 'fulfilled', 'dropped')", name="ck_intentions_status"
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
        ),
        sa.ForeignKeyConstraint(["source_entry_id"], ["day_table.entry_id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.user_id"],
        ),
        sa.PrimaryKeyConstraint("intention_id"),
    )
    op.create_index("ix_intentions_user_status", "intentions", ["user_id", "status"], unique=False)
    op.create_table(
        "memories",
        sa.Column(
            "memory_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("user_id", sa.UUID(), nullable=True),
        sa.Column("session_id", sa.UUID(), nullable=True),
        sa.Column("source_entry_id", sa.UUID(), nullable=True),
        sa.Column("memory_type", sa.Text(), server_default="episodic", nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("universal_embedding", Vector(UNIVERSAL_DIM), nullable=True),
        sa.Column("native_embedding", HALFVEC(NATIVE_DIM), nullable=True),
        sa.Column("native_model", sa.Text(), nullable=True),
        sa.Column("importance", sa.Float(), server_default="0.5", nullable=False),
        sa.Column("confidence", sa.Float(), server_default="0.5", nullable=False),
        sa.Column("access_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_accessed", sa.DateTime(timezone=True), nullable=True),
        sa.Column("evidence_count", sa.Integer(), server_default="1", nullable=False),
        sa.Column("landmark", sa.Boolean(), server_default=sa.text("false"), nullable=False),
        sa.Column("status", sa.Text(), server_default="active", nullable=False),
        sa.Column("fails_when", sa.Text(), nullable=True),
        sa.Column("fine_when", sa.Text(), nullable=True),
        sa.Column(
            "metadata",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "updated_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column(
            "content_tsv",
            postgresql.TSVECTOR(),
            sa.Computed("to_tsvector('simple'::regconfig, coalesce(content, ''))", persisted=True),
            nullable=True,
        ),
        sa.CheckConstraint(
            "memory_type IN ('episodic', 'preference', 'decision', 'fact', 'insight', 'correction', 'instruction', 'reflection', 'intention')",
            name="ck_memories_type",
        ),
        sa.CheckConstraint(
            "status IN ('active', 'superseded', 'archived')", name="ck_memories_status"
        ),
        sa.CheckConstraint("confidence >= 0 AND confidence <= 1", name="ck_memories_confidence"),
        sa.CheckConstraint("importance >= 0 AND importance <= 1", name="ck_memories_importance"),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
        ),
        sa.ForeignKeyConstraint(["source_entry_id"], ["day_table.entry_id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.user_id"],
        ),
        sa.PrimaryKeyConstraint("memory_id"),
    )
    op.create_index(
        "ix_memories_content_tsv", "memories", ["content_tsv"], unique=False, postgresql_using="gin"
    )
    op.create_index("ix_memories_importance", "memories", ["importance"], unique=False)
    op.create_index(
        "ix_memories_native_embedding_hnsw",
        "memories",
        ["native_embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_ops={"native_embedding": "halfvec_cosine_ops"},
    )
    op.create_index(
        "ix_memories_universal_embedding_hnsw",
        "memories",
        ["universal_embedding"],
        unique=False,
        postgresql_using="hnsw",
        postgresql_ops={"universal_embedding": "vector_cosine_ops"},
    )
    op.create_index("ix_memories_user_status", "memories", ["user_id", "status"], unique=False)
    op.create_table(
        "recall_log",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("session_id", sa.UUID(), nullable=True),
        sa.Column("entry_id", sa.UUID(), nullable=True),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("verdict", sa.Text(), nullable=False),
        sa.Column(
            "items",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'[]'::jsonb"),
            nullable=False,
        ),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "verdict IN ('strong_match', 'weak_match', 'no_match')", name="ck_recall_verdict"
        ),
        sa.ForeignKeyConstraint(["entry_id"], ["day_table.entry_id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_recall_log_created", "recall_log", ["created_at"], unique=False)
    op.create_table(
        "scratch_buffer",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("entry_id", sa.UUID(), nullable=True),
        sa.Column("session_id", sa.UUID(), nullable=True),
        sa.Column("user_id", sa.UUID(), nullable=True),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column(
            "signals",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column("status", sa.Text(), server_default="pending", nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("processed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'persisted', 'dropped', 'failed')", name="ck_scratch_status"
        ),
        sa.ForeignKeyConstraint(["entry_id"], ["day_table.entry_id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.user_id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_scratch_buffer_status", "scratch_buffer", ["status", "created_at"], unique=False
    )
    op.create_table(
        "gate_decisions",
        sa.Column(
            "decision_id", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False
        ),
        sa.Column("gate", sa.Text(), nullable=False),
        sa.Column("entry_id", sa.UUID(), nullable=True),
        sa.Column("scratch_id", sa.BigInteger(), nullable=True),
        sa.Column("session_id", sa.UUID(), nullable=True),
        sa.Column("decision", sa.Text(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column(
            "signals",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column("reason", sa.Text(), server_default="", nullable=False),
        sa.Column("memory_id", sa.UUID(), nullable=True),
        sa.Column("outcome", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("outcome_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "decision IN ('keep', 'drop', 'flag', 'scratch', 'pass')",
            name="ck_gate_decisions_decision",
        ),
        sa.CheckConstraint("gate IN ('entry', 'exit')", name="ck_gate_decisions_gate"),
        sa.ForeignKeyConstraint(["entry_id"], ["day_table.entry_id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.memory_id"],
        ),
        sa.ForeignKeyConstraint(
            ["scratch_id"],
            ["scratch_buffer.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.session_id"],
        ),
        sa.PrimaryKeyConstraint("decision_id"),
    )
    op.create_index(
        "ix_gate_decisions_created", "gate_decisions", ["gate", "created_at"], unique=False
    )
    op.create_table(
        "memory_links",
        sa.Column("id", sa.BigInteger(), sa.Identity(always=False), nullable=False),
        sa.Column("source_id", sa.UUID(), nullable=False),
        sa.Column("target_id", sa.UUID(), nullable=False),
        sa.Column("link_type", sa.Text(), nullable=False),
        sa.Column("strength", sa.Float(), nullable=True),
        sa.Column(
            "metadata",
            postgresql.JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
        sa.Column(
            "created_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.CheckConstraint(
            "link_type IN ('supersedes', 'contradicts', 'related')", name="ck_memory_links_type"
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["memories.memory_id"],
        ),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["memories.memory_id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("source_id", "target_id", "link_type", name="uq_memory_links"),
    )
    op.create_index("ix_memory_links_target", "memory_links", ["target_id"], unique=False)


def downgrade() -> None:

    op.drop_index("ix_memory_links_target", table_name="memory_links")
    op.drop_table("memory_links")
    op.drop_index("ix_gate_decisions_created", table_name="gate_decisions")
    op.drop_table("gate_decisions")
    op.drop_index("ix_scratch_buffer_status", table_name="scratch_buffer")
    op.drop_table("scratch_buffer")
    op.drop_index("ix_recall_log_created", table_name="recall_log")
    op.drop_table("recall_log")
    op.drop_index("ix_memories_user_status", table_name="memories")
    op.drop_index(
        "ix_memories_universal_embedding_hnsw",
        table_name="memories",
        postgresql_using="hnsw",
        postgresql_ops={"universal_embedding": "vector_cosine_ops"},
    )
    op.drop_index(
        "ix_memories_native_embedding_hnsw",
        table_name="memories",
        postgresql_using="hnsw",
        postgresql_ops={"native_embedding": "halfvec_cosine_ops"},
    )
    op.drop_index("ix_memories_importance", table_name="memories")
    op.drop_index("ix_memories_content_tsv", table_name="memories", postgresql_using="gin")
    op.drop_table("memories")
    op.drop_index("ix_intentions_user_status", table_name="intentions")
    op.drop_table("intentions")
    op.drop_index("ix_outbox_session", table_name="outbox")
    op.drop_table("outbox")
    op.drop_index("ix_day_table_user_created", table_name="day_table")
    op.drop_index(
        "ix_day_table_universal_embedding_hnsw",
        table_name="day_table",
        postgresql_using="hnsw",
        postgresql_ops={"universal_embedding": "vector_cosine_ops"},
    )
    op.drop_index("ix_day_table_session_id", table_name="day_table")
    op.drop_index(
        "ix_day_table_native_embedding_hnsw",
        table_name="day_table",
        postgresql_using="hnsw",
        postgresql_ops={"native_embedding": "halfvec_cosine_ops"},
    )
    op.drop_index("ix_day_table_message_type", table_name="day_table")
    op.drop_index("ix_day_table_created_at", table_name="day_table")
    op.drop_index("ix_day_table_content_tsv", table_name="day_table", postgresql_using="gin")
    op.drop_table("day_table")
    op.drop_index("ix_block_relationships_type", table_name="block_relationships")
    op.drop_index("ix_block_relationships_target", table_name="block_relationships")
    op.drop_index("ix_block_relationships_source", table_name="block_relationships")
    op.drop_table("block_relationships")
    op.drop_index("ix_thoughts_status", table_name="thoughts")
    op.drop_table("thoughts")
    op.drop_index("ix_inbox_pending", table_name="inbox")
    op.drop_table("inbox")
    op.drop_index("ix_holographic_blocks_user_id", table_name="holographic_blocks")
    op.drop_index(
        "ix_holographic_blocks_universal_embedding_hnsw",
        table_name="holographic_blocks",
        postgresql_using="hnsw",
        postgresql_ops={"universal_embedding": "vector_cosine_ops"},
    )
    op.drop_index("ix_holographic_blocks_session_id", table_name="holographic_blocks")
    op.drop_index(
        "ix_holographic_blocks_native_embedding_hnsw",
        table_name="holographic_blocks",
        postgresql_using="hnsw",
        postgresql_ops={"native_embedding": "halfvec_cosine_ops"},
    )
    op.drop_index("ix_holographic_blocks_last_accessed", table_name="holographic_blocks")
    op.drop_index("ix_holographic_blocks_coherence", table_name="holographic_blocks")
    op.drop_index("ix_holographic_blocks_centroid", table_name="holographic_blocks")
    op.drop_table("holographic_blocks")
    op.drop_index("ix_sessions_user_id", table_name="sessions")
    op.drop_table("sessions")
    op.drop_index("ix_identity_history_trait_id", table_name="identity_history")
    op.drop_table("identity_history")
    op.drop_index("ix_goals_history_goal_id", table_name="goals_history")
    op.drop_table("goals_history")
    op.drop_table("users")
    op.drop_table("proposals")
    op.drop_table("process_heartbeats")
    op.drop_table("preoccupation_centroids")
    op.drop_table("night_cycle_runs")
    op.drop_index("ix_llm_calls_created", table_name="llm_calls")
    op.drop_table("llm_calls")
    op.drop_table("identity")
    op.drop_table("goals")
    op.drop_index("ix_consolidation_log_pass", table_name="consolidation_log")
    op.drop_table("consolidation_log")
    op.drop_table("audit_log")
