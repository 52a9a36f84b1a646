-- What the operator's commands read about the server and the processes
-- (agent/db/catalog.py): roles, grants, the schema's presence, v_processes, row counts.

-- name: catalog_roles_present
SELECT rolname FROM pg_roles WHERE rolname = ANY(%(roles)s);

-- name: catalog_readonly_role
-- the role exists; the schema is migrated (v_processes exists)
SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = %(role)s),
       to_regclass('public.v_processes') IS NOT NULL;

-- name: catalog_readonly_granted
SELECT has_table_privilege(%(role)s, 'public.v_processes', 'SELECT');

-- name: catalog_server_version
SHOW server_version;

-- name: catalog_processes
SELECT name, pid, host, state, last_beat, alive, info FROM v_processes;

-- name: catalog_running
-- how many processes of a name are alive and running (e.g. is a loop answering?)
SELECT count(*) FROM v_processes WHERE name = %(name)s AND alive AND state = 'running';
