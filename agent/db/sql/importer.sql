-- Imports (agent/services/importer.py).

-- name: importer_user_tier
SELECT tier FROM users WHERE user_id = %s;

-- name: importer_known_external_ids
SELECT external_id FROM day_table WHERE external_id = ANY(%s);
