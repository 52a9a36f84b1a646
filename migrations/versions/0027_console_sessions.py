"""Web console sessions (issue 44): `cogd serve`'s /ui logs in with an API token.

`console_sessions`: one row per console login. The cookie holds a random session secret
(256 bits); the table keeps only its SHA-256 (`secret_hash`), like api_tokens. A session
belongs to the token that opened it (`token_id`) and to that token's user: the pair is a
foreign key onto api_tokens (token_id, user_id), so a session can never name another
user than its token's. `csrf_secret` is the value every console form carries in a
hidden field (a POST without it or with another is refused).

A session ends when it expires (`expires_at`), when its user logs out (`revoked_at`,
`ended_by` 'logout'), when the same browser logs in again while it is live (`ended_by`
'relogin'), or when its token is revoked: a trigger on api_tokens ends the
token's live sessions in the same statement (`ended_by` 'token_revoked'), another refuses
a session for a revoked token, and the lookup (agent/db/sql/console.sql,
`console_session_lookup`) reads only sessions whose token is live as well. Rows are kept
after they end (revoked or expired), never deleted by cogd: they name who was logged in
when.

Also the index the console's timeline reads a user's turn-less memories by
(`ix_memories_user_turnless`: insights, and memories whose turn the night cycle's cleanup
removed).

Revision ID: 0027_console_sessions
Revises: 0026_bulk_import
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import UUID

revision: str = "0027_console_sessions"
down_revision: str | None = "0026_bulk_import"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LIVE_TOKEN_GUARD = """
CREATE OR REPLACE FUNCTION cogd_console_session_live_token() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM api_tokens WHERE token_id = NEW.token_id
               AND revoked_at IS NOT NULL) THEN
        RAISE EXCEPTION 'token % is revoked: no console session for it', NEW.token_id
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER trg_console_sessions_live_token BEFORE INSERT ON console_sessions
FOR EACH ROW EXECUTE FUNCTION cogd_console_session_live_token();

CREATE OR REPLACE FUNCTION cogd_console_sessions_end_with_token() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE console_sessions SET revoked_at = NEW.revoked_at, ended_by = 'token_revoked'
    WHERE token_id = NEW.token_id AND revoked_at IS NULL;
    RETURN NULL;
END $$;
CREATE TRIGGER trg_api_tokens_end_console_sessions AFTER UPDATE OF revoked_at ON api_tokens
FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
EXECUTE FUNCTION cogd_console_sessions_end_with_token();
"""


def upgrade() -> None:
    # the pair a session's foreign key points at (token_id alone is the key already)
    op.create_index("uq_api_tokens_token_user", "api_tokens", ["token_id", "user_id"],
                    unique=True)
    op.create_table(
        "console_sessions",
        sa.Column("session_id", UUID(as_uuid=True), primary_key=True,
                  server_default=sa.text("gen_random_uuid()")),
        sa.Column("secret_hash", sa.Text, nullable=False),
        sa.Column("token_id", UUID(as_uuid=True), nullable=False),
        sa.Column("user_id", UUID(as_uuid=True), nullable=False),
        sa.Column("csrf_secret", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()")),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True)),
        sa.Column("ended_by", sa.Text),
        sa.Column("user_agent", sa.Text, nullable=False, server_default=""),
        sa.ForeignKeyConstraint(["token_id", "user_id"],
                                ["api_tokens.token_id", "api_tokens.user_id"],
                                name="fk_console_sessions_token_user"),
        sa.CheckConstraint("secret_hash ~ '^[0-9a-f]{64}$'",
                           name="ck_console_sessions_hash"),
        sa.CheckConstraint("length(csrf_secret) >= 32", name="ck_console_sessions_csrf"),
        sa.CheckConstraint("expires_at > created_at", name="ck_console_sessions_expiry"),
        sa.CheckConstraint("(revoked_at IS NULL) = (ended_by IS NULL) AND "
                           "(ended_by IS NULL OR ended_by IN ('logout', 'relogin', 'token_revoked'))",
                           name="ck_console_sessions_ended"),
    )
    op.create_index("uq_console_sessions_hash", "console_sessions", ["secret_hash"],
                    unique=True)
    op.create_index("ix_console_sessions_token", "console_sessions", ["token_id"])
    op.create_index("ix_console_sessions_user", "console_sessions", ["user_id"])
    op.execute(LIVE_TOKEN_GUARD)
    # the console's timeline: a user's memories that have no turn in day_table, newest
    # first (the turns have ix_day_table_user_created)
    op.create_index("ix_memories_user_turnless", "memories",
                    ["user_id", "created_at", "memory_id"],
                    postgresql_where=sa.text("source_entry_id IS NULL"))
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    op.drop_index("ix_memories_user_turnless", table_name="memories")
    op.execute("DROP TRIGGER IF EXISTS trg_api_tokens_end_console_sessions ON api_tokens")
    op.execute("DROP FUNCTION IF EXISTS cogd_console_sessions_end_with_token()")
    op.drop_table("console_sessions")
    op.execute("DROP FUNCTION IF EXISTS cogd_console_session_live_token()")
    op.drop_index("uq_api_tokens_token_user", table_name="api_tokens")
