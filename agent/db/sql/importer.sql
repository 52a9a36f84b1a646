-- Imports (agent/services/importer.py).

-- name: importer_user_tier
SELECT tier FROM users WHERE user_id = %s;

-- name: importer_known_external_ids
-- which of the ids are already turns: by external_id, or "cogd:<entry_id>" (the id
-- `cogd export` gives a turn that has none: importing an export back into the database it
-- came from adds nothing)
SELECT external_id FROM day_table WHERE external_id = ANY(%(ids)s)
UNION ALL
SELECT 'cogd:' || entry_id::text FROM day_table
WHERE entry_id = ANY(ARRAY(SELECT substr(x, 6)::uuid FROM unnest(%(ids)s::text[]) AS x
                           WHERE x ~ '^cogd:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'));
