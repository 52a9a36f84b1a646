"""Layer 0 writes only through owner-owned functions (issue "Exactly-once by the schema,
real crashes, and a locked-down embedded server").

Revision 0006's guard honoured a transaction setting any session could set: cogd_app
could name itself 'bootstrap' and INSERT any identity row, or UPDATE a proposal to
approved and then write any row under its id. Now:

- the guard honours `cogd.layer0_writer` only when the statement runs as the owner of
  `identity` (current_user): cogd_app never can, whatever it sets;
- approval is `cogd_layer0_approve(proposal, decided_by)`, SECURITY DEFINER, executable
  by no app role: it marks that one pending Layer 0 proposal approved and writes that
  proposal's payload, nothing else (`cogd approve` calls it as the owner);
- the bootstrap is `cogd_layer0_bootstrap(boundaries)`, SECURITY DEFINER, executable by
  cogd_app: it inserts the boundaries only when they equal the configured ones, which
  `cogd migrate` records as the owner-owned function `public.cogd_configured_boundaries()`
  (agent/db/migrate.py) that no app role can replace.

Both functions run with search_path pg_catalog first, so that no function or operator an
app role might create in `public` shadows a built-in inside them.

Revision ID: 0010_layer0_definer
Revises: 0009_audit_chain
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from alembic import op

revision: str = "0010_layer0_definer"
down_revision: str | None = "0009_audit_chain"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GUARD = """
CREATE OR REPLACE FUNCTION cogd_identity_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    writer text := coalesce(current_setting('cogd.layer0_writer', true), '');
    owner name := (SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = TG_RELID);
BEGIN
    -- only the owner's own statements (inside the SECURITY DEFINER functions below, or
    -- an operator connected as the owner) may name a writer; an app role never can
    IF current_user = owner THEN
        IF writer = 'bootstrap' AND TG_OP = 'INSERT' THEN
            RETURN NULL;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') AND writer ~ '^approve:[0-9a-f-]{36}$' AND EXISTS (
            SELECT FROM proposals WHERE proposal_id = substr(writer, 9)::uuid
            AND status = 'approved' AND target_layer = 0)
        THEN
            RETURN NULL;
        END IF;
    END IF;
    RAISE EXCEPTION 'identity (Layer 0) changes only through an approved proposal: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'approve a Layer 0 proposal with `cogd approve <id>`';
END $$"""

APPROVE = """
CREATE FUNCTION cogd_layer0_approve(p_proposal uuid, p_by text) RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    p record;
    w float8;
    tid uuid;
BEGIN
    SELECT status, target_layer, payload INTO p FROM proposals
    WHERE proposal_id = p_proposal FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no proposal %', p_proposal USING ERRCODE = 'no_data_found';
    END IF;
    IF p.status <> 'pending' THEN
        RAISE EXCEPTION 'proposal % is already %', p_proposal, p.status
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p.target_layer <> 0 OR coalesce(p.payload ->> 'name', '') = '' THEN
        RAISE EXCEPTION 'proposal % is not a Layer 0 value with a name', p_proposal
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    UPDATE proposals SET status = 'approved', decided_at = now(), decided_by = p_by
    WHERE proposal_id = p_proposal;
    w := coalesce((p.payload ->> 'weight')::float8, 0.5);
    PERFORM set_config('cogd.layer0_writer', 'approve:' || p_proposal::text, true);
    INSERT INTO identity (name, description, weight, source)
    VALUES (p.payload ->> 'name', coalesce(p.payload ->> 'description', ''), w, 'proposal')
    ON CONFLICT (name) DO UPDATE SET weight = EXCLUDED.weight,
        description = EXCLUDED.description, updated_at = now()
    RETURNING trait_id INTO tid;
    INSERT INTO identity_history (trait_id, old_weight, new_weight, reason, proposal_id)
    VALUES (tid, NULL, w, 'approved proposal', p_proposal);
    PERFORM set_config('cogd.layer0_writer', '', true);
    RETURN tid;
END $$"""

BOOTSTRAP = """
CREATE FUNCTION cogd_layer0_bootstrap(p_boundaries text[]) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    added integer := 0;
    tid uuid;
    configured text[];
BEGIN
    IF to_regprocedure('public.cogd_configured_boundaries()') IS NULL THEN
        RAISE EXCEPTION 'identity bootstrap refused: no configured boundaries recorded'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'run `cogd migrate` (it records [identity] bootstrap_boundaries)';
    END IF;
    EXECUTE 'SELECT public.cogd_configured_boundaries()' INTO configured;
    IF p_boundaries IS DISTINCT FROM configured THEN
        RAISE EXCEPTION 'identity bootstrap refused: these are not the configured boundaries'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'run `cogd migrate` after changing [identity] bootstrap_boundaries';
    END IF;
    PERFORM set_config('cogd.layer0_writer', 'bootstrap', true);
    FOR i IN 1 .. coalesce(array_length(p_boundaries, 1), 0) LOOP
        tid := NULL;
        INSERT INTO identity (name, description, weight, source, is_boundary)
        VALUES ('boundary_' || i, p_boundaries[i], 1.0, 'config', true)
        ON CONFLICT (name) DO NOTHING RETURNING trait_id INTO tid;
        IF tid IS NOT NULL THEN
            added := added + 1;
            INSERT INTO audit_log (actor, action, target, details)
            VALUES ('config', 'identity_bootstrap', tid::text,
                    jsonb_build_object('boundary', p_boundaries[i]));
        END IF;
    END LOOP;
    PERFORM set_config('cogd.layer0_writer', '', true);
    RETURN added;
END $$"""

GRANTS = """
DO $$
BEGIN
    REVOKE ALL ON FUNCTION cogd_layer0_approve(uuid, text) FROM PUBLIC;
    REVOKE ALL ON FUNCTION cogd_layer0_bootstrap(text[]) FROM PUBLIC;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'cogd_app') THEN
        REVOKE ALL ON FUNCTION cogd_layer0_approve(uuid, text) FROM cogd_app;
        GRANT EXECUTE ON FUNCTION cogd_layer0_bootstrap(text[]) TO cogd_app;
    END IF;
END $$"""



def _guard_of_0006() -> str:
    """Revision 0006's guard, as that revision wrote it, for the downgrade to restore."""
    r0006 = importlib.import_module("migrations.versions.0006_roles_and_indexes")
    return str(r0006.IDENTITY_GUARD).replace(
        "CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


def upgrade() -> None:
    op.execute(GUARD)
    op.execute(APPROVE)
    op.execute(BOOTSTRAP)
    op.execute(GRANTS)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS cogd_layer0_bootstrap(text[])")
    op.execute("DROP FUNCTION IF EXISTS cogd_layer0_approve(uuid, text)")
    op.execute("DROP FUNCTION IF EXISTS public.cogd_configured_boundaries()")
    op.execute(_guard_of_0006())
