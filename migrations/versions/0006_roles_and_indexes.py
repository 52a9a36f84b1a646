"""Database roles, the Layer 0 write guard, entry_id indexes (issue #8).

Roles (cluster-wide, shared by every database on the server):
- cogd_app: LOGIN; SELECT/INSERT/UPDATE/DELETE on the cogd tables, sequences, SELECT on
  the views; audit_log only SELECT/INSERT; no DDL, no TRUNCATE.
- cogd_readonly: LOGIN; SELECT on the v_* views only (views read the tables with their
  owner's rights, so no table is reachable directly).
Both are created without a password: set one with ALTER ROLE ... PASSWORD on a server
that authenticates by password. A migrating user that may not create roles (a managed
Postgres) gets a NOTICE instead of a failure; the grants wait until an administrator
creates the roles and runs SELECT cogd_apply_grants() in this database.

cogd_apply_grants() re-applies every grant idempotently. NOTE for later revisions: call
`SELECT cogd_apply_grants()` after creating tables or views (default privileges cover
new tables for cogd_app, but a new v_* view needs it to reach cogd_readonly).

Layer 0 guard: a statement trigger refuses INSERT/UPDATE/DELETE/TRUNCATE on identity
unless the transaction set cogd.layer0_writer to 'bootstrap' (INSERT only: the
configured hard boundaries) or 'approve:<proposal id>' of an approved Layer 0 proposal
(agent/services/records/identity.py). A guard against application code paths, for every role,
the owner included; the owner can still drop the trigger, as with audit_log.

Indexes: entry_id on the tables that reference day_table with ON DELETE SET NULL, so the
night cycle's stage 9 (day-table cleanup) does not scan them once per deleted turn.

Revision ID: 0006_roles_and_indexes
Revises: 0005_consolidation_dmn
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006_roles_and_indexes"
down_revision: str | None = "0005_consolidation_dmn"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROLES = ("cogd_app", "cogd_readonly")
ENTRY_INDEXES = {
    "ix_gate_decisions_entry_id": "gate_decisions",
    "ix_scratch_buffer_entry_id": "scratch_buffer",
    "ix_recall_log_entry_id": "recall_log",
    "ix_escalations_entry_id": "escalations",
}

HOW_TO_CREATE = (
    "CREATE ROLE cogd_app LOGIN PASSWORD ''...''; CREATE ROLE cogd_readonly LOGIN PASSWORD "
    "''...''; then, in this database, SELECT cogd_apply_grants()"
)

CREATE_ROLES = f"""
DO $$
DECLARE
    may_create boolean;
    r text;
BEGIN
    SELECT rolsuper OR rolcreaterole INTO may_create FROM pg_roles WHERE rolname = current_user;
    FOREACH r IN ARRAY ARRAY{list(ROLES)!r} LOOP
        CONTINUE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = r);
        IF NOT may_create THEN
            RAISE NOTICE 'cogd: % may not create roles; role % skipped (and its grants). '
                'An administrator can run: {HOW_TO_CREATE}', current_user, r;
            CONTINUE;
        END IF;
        BEGIN
            EXECUTE format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE '
                           'NOREPLICATION NOBYPASSRLS', r);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;  -- another database's migration created it first
        END;
    END LOOP;
END $$"""

# every grant, idempotent; skipped with a NOTICE while a role is missing
APPLY_GRANTS = f"""
CREATE OR REPLACE FUNCTION cogd_apply_grants() RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    t record;
BEGIN
    IF (SELECT count(*) FROM pg_roles WHERE rolname IN ('cogd_app', 'cogd_readonly')) < 2 THEN
        RAISE NOTICE 'cogd: roles cogd_app/cogd_readonly missing; grants skipped. '
            'An administrator can run: {HOW_TO_CREATE}';
        RETURN false;
    END IF;
    BEGIN
        EXECUTE format('GRANT CONNECT, TEMPORARY ON DATABASE %I TO cogd_app', current_database());
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO cogd_readonly', current_database());
    EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'cogd: not the owner of database %: CONNECT not granted (PUBLIC may have it)',
            current_database();
    END;
    GRANT USAGE ON SCHEMA public TO cogd_app, cogd_readonly;
    FOR t IN SELECT c.relname, c.relkind FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm')
             AND pg_get_userbyid(c.relowner) = current_user
    LOOP
        EXECUTE format('REVOKE ALL ON %I FROM cogd_app, cogd_readonly', t.relname);
        IF t.relkind IN ('v', 'm') THEN
            EXECUTE format('GRANT SELECT ON %I TO cogd_app', t.relname);
            IF left(t.relname, 2) = 'v_' THEN
                EXECUTE format('GRANT SELECT ON %I TO cogd_readonly', t.relname);
            END IF;
        ELSIF t.relname = 'alembic_version' THEN
            EXECUTE format('GRANT SELECT ON %I TO cogd_app', t.relname);
        ELSIF t.relname = 'audit_log' THEN  -- append-only (the 0002 triggers refuse the rest)
            EXECUTE format('GRANT SELECT, INSERT ON %I TO cogd_app', t.relname);
        ELSE
            EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO cogd_app', t.relname);
        END IF;
    END LOOP;
    GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO cogd_app;
    ALTER DEFAULT PRIVILEGES IN SCHEMA public
        GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO cogd_app;
    ALTER DEFAULT PRIVILEGES IN SCHEMA public
        GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO cogd_app;
    IF has_schema_privilege('cogd_app', 'public', 'CREATE') THEN
        RAISE NOTICE 'cogd: PUBLIC may create objects in schema public (PostgreSQL < 15?); '
            'run REVOKE CREATE ON SCHEMA public FROM PUBLIC to keep cogd_app free of DDL';
    END IF;
    RETURN true;
END $$"""

REVOKE_AND_DROP_ROLES = """
DO $$
DECLARE
    r text;
BEGIN
    IF (SELECT count(*) FROM pg_roles WHERE rolname IN ('cogd_app', 'cogd_readonly')) = 2 THEN
        ALTER DEFAULT PRIVILEGES IN SCHEMA public
            REVOKE ALL ON TABLES FROM cogd_app;
        ALTER DEFAULT PRIVILEGES IN SCHEMA public
            REVOKE ALL ON SEQUENCES FROM cogd_app;
        REVOKE ALL ON ALL TABLES IN SCHEMA public FROM cogd_app, cogd_readonly;
        REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM cogd_app, cogd_readonly;
        REVOKE ALL ON SCHEMA public FROM cogd_app, cogd_readonly;
        BEGIN
            EXECUTE format('REVOKE ALL ON DATABASE %I FROM cogd_app, cogd_readonly',
                           current_database());
        EXCEPTION WHEN insufficient_privilege THEN
            NULL;
        END;
    END IF;
    -- roles are shared by every database on the server: keep them while another uses them
    FOREACH r IN ARRAY ARRAY['cogd_readonly', 'cogd_app'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r);
        BEGIN
            EXECUTE format('DROP ROLE %I', r);
        EXCEPTION WHEN dependent_objects_still_exist OR insufficient_privilege THEN
            RAISE NOTICE 'cogd: role % kept: %', r, SQLERRM;
        END;
    END LOOP;
END $$"""

IDENTITY_GUARD = """
CREATE FUNCTION cogd_identity_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    writer text := coalesce(current_setting('cogd.layer0_writer', true), '');
BEGIN
    IF writer = 'bootstrap' AND TG_OP = 'INSERT' THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND writer ~ '^approve:[0-9a-f-]{36}$' AND EXISTS (
        SELECT FROM proposals WHERE proposal_id = substr(writer, 9)::uuid
        AND status = 'approved' AND target_layer = 0)
    THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'identity (Layer 0) changes only through an approved proposal: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'approve a Layer 0 proposal with `cogd approve <id>`';
END $$"""


def upgrade() -> None:
    for name, table in ENTRY_INDEXES.items():
        op.create_index(name, table, ["entry_id"], if_not_exists=True)
    op.execute(IDENTITY_GUARD)
    op.execute(
        """
        CREATE TRIGGER identity_layer0_guard
        BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON identity
        FOR EACH STATEMENT EXECUTE FUNCTION cogd_identity_guard()"""
    )
    op.execute(CREATE_ROLES)
    op.execute(APPLY_GRANTS)
    op.execute("SELECT cogd_apply_grants()")


def downgrade() -> None:
    op.execute(REVOKE_AND_DROP_ROLES)
    op.execute("DROP FUNCTION IF EXISTS cogd_apply_grants()")
    op.execute("DROP TRIGGER IF EXISTS identity_layer0_guard ON identity")
    op.execute("DROP FUNCTION IF EXISTS cogd_identity_guard()")
    for name, table in reversed(ENTRY_INDEXES.items()):
        op.drop_index(name, table_name=table, if_exists=True)
