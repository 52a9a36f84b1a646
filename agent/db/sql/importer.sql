-- Imports (agent/services/importer.py).

-- name: importer_user_tier
SELECT tier FROM users WHERE user_id = %s;

-- name: importer_known_external_ids
-- which of the ids are already turns: by external_id, or "cogd:<entry_id>" (the id
-- `cogd export` gives a turn that has none: importing an export back into the database it
-- came from adds nothing)
SELECT external_id FROM day_table WHERE external_id = ANY(%(ids)s)
UNION ALL
SELECT x FROM unnest(%(ids)s::text[]) AS x
WHERE CASE WHEN x ~* '^cogd:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
           -- CASE: the cast runs only on what the pattern let through
           THEN EXISTS (SELECT 1 FROM day_table WHERE entry_id = substr(x, 6)::uuid)
           ELSE false END;

-- name: importer_session_owner
-- an existing session by its key (external id, or its uuid as text) and its owner
SELECT session_id, user_id FROM sessions
WHERE external_id = %(key)s OR session_id::text = lower(%(key)s)
ORDER BY external_id = %(key)s DESC LIMIT 1;
