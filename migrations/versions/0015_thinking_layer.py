"""The thinking layer (issue "The thinking layer: models, predictions, principles,
overnight problem-solving, and a self-model test"; seed 000 §8, §9.4-9.6, §10; seed 003's
measurable proxy of the self-model).

- `cognitive_models`: beliefs about how something works (seed 000 §10.2): statement,
  domain, confidence in [0, 0.95], status, check/strengthen/weaken counts, a vector;
  `model_evidence`: each piece of evidence (a memory or a turn) with its direction and the
  confidence before and after.
- `predictions`: explicit, dated expectations (seed 000 §10.3) by the agent or the user,
  settled when their deadline passes or a later turn settles them; `v_calibration`:
  stated confidence against hit rate per domain.
- `principles`: rules crystallised from agreeing models or corrections (seed 000 §10.4),
  with their sources; an identity-changing one goes through a Layer 0 proposal.
- `workflows`: recurring multi-step procedures (seed 000 §10.5), their steps and the
  sessions they were seen in.
- `decisions`: reasoning trails (seed 000 §8.2-8.3): the decision, the alternatives
  considered and why not, the rationale, and the outcome once known.
- `problem_queue`: what the night's thinking phase works on (seed 000 §9.5): open
  questions, unresolved contradictions, failed predictions; results are `thoughts` of
  kind `overnight` (and `creative_drift`, seed 000 §9.6), with a `confidence`.
- `self_test_runs` / `self_test_items`: the self-model prediction test (seed 003).

Every row carries the `detector` that made it (the LLM, or a named heuristic).

Revision ID: 0015_thinking_layer
Revises: 0014_conversation_reach
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects.postgresql import JSONB, UUID

revision: str = "0015_thinking_layer"
down_revision: str | None = "0014_conversation_reach"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_THOUGHT_KINDS = ("self_prompt", "creative_impulse", "proactive_recall", "discarded",
                     "internal_turn", "epiphany")
THOUGHT_KINDS = (*OLD_THOUGHT_KINDS, "overnight", "creative_drift")
MODEL_DOMAINS = ("work_patterns", "emotional", "project", "behavioral", "technical",
                 "business", "general")

VIEWS = {
    "v_models": """
CREATE VIEW v_models AS
SELECT m.model_id, u.handle AS user_handle, m.domain, m.status,
       round(m.confidence::numeric, 3) AS confidence, m.check_count, m.strengthen_count,
       m.weaken_count, left(m.statement, 160) AS statement, m.detector,
       (SELECT count(*) FROM model_evidence e WHERE e.model_id = m.model_id) AS evidence,
       m.last_checked_at, m.updated_at
FROM cognitive_models m LEFT JOIN users u ON u.user_id = m.user_id
ORDER BY m.status, m.confidence DESC""",
    "v_predictions": """
CREATE VIEW v_predictions AS
SELECT p.prediction_id, u.handle AS user_handle, p.made_by, p.domain, p.status,
       round(p.confidence::numeric, 2) AS confidence, p.deadline, p.settled_at,
       p.settlement->>'detector' AS settled_by, left(p.statement, 160) AS statement,
       p.created_at
FROM predictions p LEFT JOIN users u ON u.user_id = p.user_id
ORDER BY p.status = 'pending' DESC, p.deadline NULLS LAST, p.created_at DESC""",
    "v_calibration": """
CREATE VIEW v_calibration AS
SELECT domain, width_bucket(confidence, 0, 1.0000001, 5) AS bucket,
       round(min(confidence)::numeric, 2) AS confidence_from,
       round(max(confidence)::numeric, 2) AS confidence_to,
       count(*) AS settled,
       round(avg(confidence)::numeric, 3) AS stated,
       round(avg(CASE status WHEN 'correct' THEN 1.0 WHEN 'partially_correct' THEN 0.5
                 ELSE 0.0 END), 3) AS hit_rate,
       round((avg(confidence) - avg(CASE status WHEN 'correct' THEN 1.0
              WHEN 'partially_correct' THEN 0.5 ELSE 0.0 END))::numeric, 3)
           AS calibration_error
FROM predictions WHERE status IN ('correct', 'wrong', 'partially_correct')
GROUP BY domain, bucket ORDER BY domain, bucket""",
    "v_principles": """
CREATE VIEW v_principles AS
SELECT p.principle_id, u.handle AS user_handle, p.status,
       round(p.confidence::numeric, 3) AS confidence, p.confirm_count, p.challenge_count,
       left(p.statement, 160) AS statement, jsonb_array_length(p.source_ids) AS sources,
       p.proposal_id, p.detector, p.updated_at
FROM principles p LEFT JOIN users u ON u.user_id = p.user_id
ORDER BY p.status, p.confidence DESC""",
    "v_workflows": """
CREATE VIEW v_workflows AS
SELECT w.workflow_id, u.handle AS user_handle, w.name, w.status,
       round(w.confidence::numeric, 3) AS confidence, jsonb_array_length(w.steps) AS steps,
       w.times_matched, w.times_completed, w.times_skipped,
       jsonb_array_length(w.source_sessions) AS sessions, left(w.trigger, 120) AS trigger,
       w.detector, w.updated_at
FROM workflows w LEFT JOIN users u ON u.user_id = w.user_id
ORDER BY w.status, w.confidence DESC""",
    "v_problem_queue": """
CREATE VIEW v_problem_queue AS
SELECT q.problem_id, u.handle AS user_handle, q.kind, q.status, q.attempts,
       left(q.content, 160) AS content, q.last_run_id, q.result_thought_id, q.created_at,
       q.updated_at
FROM problem_queue q LEFT JOIN users u ON u.user_id = q.user_id
ORDER BY q.status = 'open' DESC, q.created_at""",
    "v_self_test": """
CREATE VIEW v_self_test AS
SELECT run_id, created_at, scenarios, agreed, round(agreement::numeric, 3) AS agreement,
       model, detector
FROM self_test_runs ORDER BY created_at""",
}


def _universal_dim() -> int:
    settings = context.config.attributes.get("settings")
    if settings is None:
        from agent.config import load_settings

        settings = load_settings()
    return int(settings.embedding.universal_dim)


def _in(col: str, values: Sequence[str]) -> str:
    return f"{col} IN (" + ", ".join(f"'{v}'" for v in values) + ")"


def _uuid_pk(name: str) -> sa.Column:
    return sa.Column(name, UUID(as_uuid=True), primary_key=True,
                     server_default=sa.text("gen_random_uuid()"))


def _ts(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable,
                     server_default=None if nullable else sa.text("now()"))


def _user() -> sa.Column:
    return sa.Column("user_id", UUID(as_uuid=True), sa.ForeignKey("users.user_id"))


def _jsonb(name: str, default: str = "[]") -> sa.Column:
    return sa.Column(name, JSONB(), nullable=False, server_default=sa.text(f"'{default}'::jsonb"))


def _entry(name: str) -> sa.Column:
    return sa.Column(name, UUID(as_uuid=True),
                     sa.ForeignKey("day_table.entry_id", ondelete="SET NULL"))


def upgrade() -> None:
    dim = _universal_dim()
    op.create_table(
        "cognitive_models",
        _uuid_pk("model_id"), _user(),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("domain", sa.Text(), nullable=False, server_default="general"),
        sa.Column("confidence", sa.Float(), nullable=False, server_default="0.5"),
        sa.Column("status", sa.Text(), nullable=False, server_default="active"),
        sa.Column("check_count", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("strengthen_count", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("weaken_count", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("universal_embedding", Vector(dim)),
        sa.Column("detector", sa.Text(), nullable=False),
        _ts("created_at"), _ts("updated_at"), _ts("last_checked_at", nullable=True),
        sa.CheckConstraint(_in("domain", MODEL_DOMAINS), name="ck_cognitive_models_domain"),
        sa.CheckConstraint("confidence >= 0 AND confidence <= 0.95",
                           name="ck_cognitive_models_confidence"),
        sa.CheckConstraint(_in("status", ("active", "weakened", "invalidated", "superseded")),
                           name="ck_cognitive_models_status"),
    )
    op.create_index("ix_cognitive_models_user_status", "cognitive_models",
                    ["user_id", "status"])
    op.create_table(
        "model_evidence",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column("model_id", UUID(as_uuid=True),
                  sa.ForeignKey("cognitive_models.model_id", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("memory_id", UUID(as_uuid=True),
                  sa.ForeignKey("memories.memory_id", ondelete="SET NULL")),
        _entry("entry_id"),
        sa.Column("direction", sa.Text(), nullable=False),
        sa.Column("note", sa.Text()),
        sa.Column("confidence_before", sa.Float(), nullable=False),
        sa.Column("confidence_after", sa.Float(), nullable=False),
        sa.Column("detector", sa.Text(), nullable=False),
        _ts("created_at"),
        sa.CheckConstraint(_in("direction", ("supports", "contradicts", "invalidates")),
                           name="ck_model_evidence_direction"),
    )
    op.create_index("ix_model_evidence_model", "model_evidence", ["model_id"])
    op.create_index("uq_model_evidence_memory", "model_evidence", ["model_id", "memory_id"],
                    unique=True, postgresql_where=sa.text("memory_id IS NOT NULL"))

    op.create_table(
        "predictions",
        _uuid_pk("prediction_id"), _user(),
        sa.Column("session_id", UUID(as_uuid=True), sa.ForeignKey("sessions.session_id")),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("domain", sa.Text(), nullable=False, server_default="general"),
        sa.Column("confidence", sa.Float(), nullable=False, server_default="0.5"),
        _ts("deadline", nullable=True),
        sa.Column("made_by", sa.Text(), nullable=False),
        _entry("source_entry_id"),
        sa.Column("source_model_id", UUID(as_uuid=True),
                  sa.ForeignKey("cognitive_models.model_id", ondelete="SET NULL")),
        sa.Column("status", sa.Text(), nullable=False, server_default="pending"),
        _ts("settled_at", nullable=True),
        _entry("settled_by_entry_id"),
        sa.Column("settlement", JSONB()),
        sa.Column("universal_embedding", Vector(dim)),
        sa.Column("detector", sa.Text(), nullable=False),
        _ts("created_at"),
        sa.CheckConstraint(_in("domain", MODEL_DOMAINS), name="ck_predictions_domain"),
        sa.CheckConstraint("confidence >= 0 AND confidence <= 1",
                           name="ck_predictions_confidence"),
        sa.CheckConstraint(_in("made_by", ("agent", "user")), name="ck_predictions_made_by"),
        sa.CheckConstraint(
            _in("status", ("pending", "correct", "wrong", "partially_correct", "expired")),
            name="ck_predictions_status"),
        sa.CheckConstraint("(status = 'pending') = (settled_at IS NULL)",
                           name="ck_predictions_settled"),
    )
    op.create_index("ix_predictions_user_status", "predictions", ["user_id", "status"])
    op.create_index("uq_predictions_source_entry", "predictions", ["source_entry_id"],
                    unique=True, postgresql_where=sa.text("source_entry_id IS NOT NULL"))

    op.create_table(
        "principles",
        _uuid_pk("principle_id"), _user(),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False, server_default="0.5"),
        sa.Column("status", sa.Text(), nullable=False, server_default="active"),
        _jsonb("source_ids"),
        sa.Column("confirm_count", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("challenge_count", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("universal_embedding", Vector(dim)),
        sa.Column("proposal_id", UUID(as_uuid=True), sa.ForeignKey("proposals.proposal_id")),
        sa.Column("detector", sa.Text(), nullable=False),
        _ts("created_at"), _ts("updated_at"),
        sa.CheckConstraint("confidence >= 0 AND confidence <= 0.95",
                           name="ck_principles_confidence"),
        sa.CheckConstraint(_in("status", ("active", "challenged", "retired", "proposed")),
                           name="ck_principles_status"),
    )
    op.create_index("ix_principles_user_status", "principles", ["user_id", "status"])

    op.create_table(
        "workflows",
        _uuid_pk("workflow_id"), _user(),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("trigger", sa.Text(), nullable=False),
        _jsonb("steps"),
        sa.Column("domain", sa.Text(), nullable=False, server_default="general"),
        sa.Column("confidence", sa.Float(), nullable=False, server_default="0.5"),
        sa.Column("status", sa.Text(), nullable=False, server_default="active"),
        sa.Column("times_matched", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("times_completed", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("times_skipped", sa.Integer(), nullable=False, server_default="0"),
        _jsonb("source_sessions"),
        sa.Column("signature", sa.Text(), nullable=False),
        sa.Column("universal_embedding", Vector(dim)),
        sa.Column("detector", sa.Text(), nullable=False),
        _ts("created_at"), _ts("updated_at"), _ts("last_matched_at", nullable=True),
        sa.CheckConstraint("confidence >= 0 AND confidence <= 0.95",
                           name="ck_workflows_confidence"),
        sa.CheckConstraint(_in("status", ("active", "retired")), name="ck_workflows_status"),
    )
    op.create_index("uq_workflows_user_signature", "workflows", ["user_id", "signature"],
                    unique=True)

    op.create_table(
        "decisions",
        _uuid_pk("decision_id"), _user(),
        sa.Column("session_id", UUID(as_uuid=True), sa.ForeignKey("sessions.session_id")),
        _entry("entry_id"),
        sa.Column("memory_id", UUID(as_uuid=True),
                  sa.ForeignKey("memories.memory_id", ondelete="SET NULL")),
        sa.Column("decision", sa.Text(), nullable=False),
        _jsonb("alternatives"),
        sa.Column("rationale", sa.Text()),
        sa.Column("outcome", sa.Text()),
        _entry("outcome_entry_id"),
        sa.Column("assessment", sa.Text()),
        sa.Column("lesson", sa.Text()),
        sa.Column("universal_embedding", Vector(dim)),
        sa.Column("detector", sa.Text(), nullable=False),
        _ts("created_at"), _ts("outcome_at", nullable=True),
        sa.CheckConstraint("assessment IS NULL OR " + _in("assessment", ("win", "loss",
                                                                         "partial")),
                           name="ck_decisions_assessment"),
    )
    op.create_index("ix_decisions_user", "decisions", ["user_id", "created_at"])
    op.create_index("uq_decisions_entry", "decisions", ["entry_id"], unique=True,
                    postgresql_where=sa.text("entry_id IS NOT NULL"))

    op.create_table(
        "problem_queue",
        _uuid_pk("problem_id"), _user(),
        sa.Column("kind", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        _jsonb("source_ids"),
        sa.Column("source_key", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False, server_default="open"),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("last_run_id", sa.BigInteger(), sa.ForeignKey("night_cycle_runs.run_id")),
        sa.Column("result_thought_id", UUID(as_uuid=True),
                  sa.ForeignKey("thoughts.thought_id", ondelete="SET NULL")),
        _ts("created_at"), _ts("updated_at"),
        sa.CheckConstraint(
            _in("kind", ("open_question", "contradiction", "failed_prediction",
                         "user_submitted")), name="ck_problem_queue_kind"),
        sa.CheckConstraint(_in("status", ("open", "worked", "resolved", "dropped")),
                           name="ck_problem_queue_status"),
    )
    op.create_index("uq_problem_queue_source", "problem_queue", ["source_key"], unique=True)

    op.create_table(
        "self_test_runs",
        sa.Column("run_id", sa.BigInteger(), sa.Identity(), primary_key=True),
        _ts("created_at"),
        sa.Column("scenarios", sa.Integer(), nullable=False),
        sa.Column("agreed", sa.Integer(), nullable=False),
        sa.Column("agreement", sa.Float(), nullable=False),
        sa.Column("model", sa.Text(), nullable=False),
        sa.Column("detector", sa.Text(), nullable=False),
        _jsonb("details", "{}"),
        sa.CheckConstraint("agreed >= 0 AND agreed <= scenarios",
                           name="ck_self_test_runs_agreed"),
    )
    op.create_table(
        "self_test_items",
        sa.Column("id", sa.BigInteger(), sa.Identity(), primary_key=True),
        sa.Column("run_id", sa.BigInteger(),
                  sa.ForeignKey("self_test_runs.run_id", ondelete="CASCADE"), nullable=False),
        sa.Column("scenario", sa.Text(), nullable=False),
        _jsonb("options"),
        sa.Column("predicted", sa.Text(), nullable=False),
        sa.Column("actual", sa.Text(), nullable=False),
        sa.Column("agreed", sa.Boolean(), nullable=False),
    )
    op.create_index("ix_self_test_items_run", "self_test_items", ["run_id"])

    # the models' pass reads the newest memories each time (ORDER BY created_at LIMIT)
    op.create_index("ix_memories_created_at", "memories", ["created_at"])
    op.drop_constraint("ck_thoughts_kind", "thoughts", type_="check")
    op.create_check_constraint("ck_thoughts_kind", "thoughts", _in("kind", THOUGHT_KINDS))
    op.add_column("thoughts", sa.Column("confidence", sa.Float()))
    for view in VIEWS.values():
        op.execute(view)
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    for name in VIEWS:
        op.execute(f"DROP VIEW {name}")
    op.drop_index("ix_memories_created_at", "memories")
    op.drop_column("thoughts", "confidence")
    op.execute("DELETE FROM thoughts WHERE kind IN ('overnight', 'creative_drift')")
    op.drop_constraint("ck_thoughts_kind", "thoughts", type_="check")
    op.create_check_constraint("ck_thoughts_kind", "thoughts", _in("kind", OLD_THOUGHT_KINDS))
    for table in ("self_test_items", "self_test_runs", "problem_queue", "decisions",
                  "workflows", "principles", "predictions", "model_evidence",
                  "cognitive_models"):
        op.drop_table(table)
