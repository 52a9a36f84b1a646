"""psql views (v_*), the append-only audit_log trigger, notify helpers.

Revision ID: 0002_views_and_guards
Revises: 0001_hippocampus
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002_views_and_guards"
down_revision: str | None = "0001_hippocampus"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# liveness window for v_processes; matches process.stale_after_s in config/default.toml
STALE = "interval '30 seconds'"

VIEWS: dict[str, str] = {
    "v_processes": f"""
        SELECT name, pid, host, state, started_at, last_beat,
               round(extract(epoch FROM now() - last_beat)::numeric, 1) AS seconds_since_beat,
               last_beat > now() - {STALE} AS alive,
               info
        FROM process_heartbeats
        ORDER BY alive DESC, name, started_at DESC""",
    "v_today": """
        SELECT d.session_id, u.handle AS user_handle,
               count(*) AS entries,
               count(*) FILTER (WHERE d.role = 'user') AS user_turns,
               count(*) FILTER (WHERE d.role = 'assistant') AS assistant_turns,
               count(*) FILTER (WHERE d.universal_embedding IS NULL) AS unembedded,
               sum(d.token_count) AS tokens,
               min(d.created_at) AS first_at, max(d.created_at) AS last_at
        FROM day_table d
        LEFT JOIN users u ON u.user_id = d.user_id
        WHERE d.created_at >= date_trunc('day', now())
        GROUP BY d.session_id, u.handle
        ORDER BY last_at DESC""",
    "v_memories": """
        SELECT m.memory_id, m.memory_type, m.status, round(m.importance::numeric, 3) AS importance,
               round(m.confidence::numeric, 3) AS confidence, m.access_count, m.landmark,
               left(m.content, 120) AS content,
               (SELECT count(*) FROM memory_links l
                 WHERE l.source_id = m.memory_id OR l.target_id = m.memory_id) AS links,
               (SELECT count(*) FROM memory_links l
                 WHERE l.target_id = m.memory_id AND l.link_type = 'supersedes') AS superseded_by,
               (SELECT count(*) FROM memory_links l
                 WHERE (l.source_id = m.memory_id OR l.target_id = m.memory_id)
                   AND l.link_type = 'contradicts') AS contradictions,
               m.created_at, m.last_accessed
        FROM memories m
        ORDER BY m.importance DESC, m.created_at DESC""",
    # tendencies as the prompt renders them (seed 003 identity injection)
    "v_identity": """
        SELECT name, round(weight::numeric, 3) AS weight,
               CASE WHEN weight > 0.8 THEN 'strongly'
                    WHEN weight > 0.5 THEN 'generally'
                    ELSE 'mildly' END AS tendency,
               is_boundary, source, description, updated_at
        FROM identity
        ORDER BY is_boundary DESC, weight DESC""",
    "v_goals": """
        SELECT name, round(weight::numeric, 3) AS weight, status, evidence_count,
               round((weight / nullif(sum(weight) OVER (PARTITION BY status), 0))::numeric, 3)
                   AS share_of_weight,
               last_reinforced_at, description, updated_at
        FROM goals
        ORDER BY status, weight DESC""",
    "v_gate_stats": """
        SELECT gate, decision, count(*) AS total,
               count(*) FILTER (WHERE created_at >= date_trunc('day', now())) AS today,
               round(avg(score)::numeric, 3) AS avg_score,
               count(*) FILTER (WHERE outcome IS NOT NULL) AS with_outcome,
               max(created_at) AS last_at
        FROM gate_decisions
        GROUP BY gate, decision
        ORDER BY gate, decision""",
    "v_night_cycle": """
        SELECT run_id, status, stage, started_at, finished_at,
               round(extract(epoch FROM coalesce(finished_at, now()) - started_at)::numeric, 1)
                   AS seconds,
               checkpoints, summary, error
        FROM night_cycle_runs
        ORDER BY run_id DESC""",
    "v_llm_calls": """
        SELECT date_trunc('day', created_at) AS day, provider, model, role, kind,
               count(*) AS calls,
               count(*) FILTER (WHERE NOT ok) AS errors,
               sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out,
               round(avg(latency_ms)::numeric, 1) AS avg_latency_ms,
               round((percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms))::numeric, 1)
                   AS p95_latency_ms,
               sum(attempts - 1) AS retries
        FROM llm_calls
        GROUP BY 1, provider, model, role, kind
        ORDER BY day DESC, calls DESC""",
}


def upgrade() -> None:
    for name, body in VIEWS.items():
        op.execute(f"CREATE VIEW {name} AS {body}")
    # audit_log is append-only for every role, owner included; statement-level, so
    # even an UPDATE or DELETE that matches no row is refused
    op.execute(
        """
        CREATE FUNCTION cogd_audit_log_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'audit_log is append-only: % is not allowed', TG_OP
                USING ERRCODE = 'insufficient_privilege';
        END $$"""
    )
    op.execute(
        """
        CREATE TRIGGER audit_log_no_update_delete
        BEFORE UPDATE OR DELETE ON audit_log
        FOR EACH STATEMENT EXECUTE FUNCTION cogd_audit_log_append_only()"""
    )
    op.execute(
        """
        CREATE TRIGGER audit_log_no_truncate
        BEFORE TRUNCATE ON audit_log
        FOR EACH STATEMENT EXECUTE FUNCTION cogd_audit_log_append_only()"""
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS audit_log_no_truncate ON audit_log")
    op.execute("DROP TRIGGER IF EXISTS audit_log_no_update_delete ON audit_log")
    op.execute("DROP FUNCTION IF EXISTS cogd_audit_log_append_only()")
    for name in reversed(VIEWS):
        op.execute(f"DROP VIEW IF EXISTS {name}")
