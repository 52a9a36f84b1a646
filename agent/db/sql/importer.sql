-- Imports (agent/services/access/importer.py).

-- name: importer_user_tier
SELECT tier FROM users WHERE user_id = %s;

-- name: importer_known_external_ids
-- which (user, id) pairs are already that user's turns: by external_id (unique per user,
-- revision 0019: another user's key is neither a duplicate nor revealed), or
-- "cogd:<entry_id>" (the id `cogd export` gives a turn that has none: importing an export
-- back into the database it came from adds nothing), the user's own turn only
SELECT k.user_id::text, k.external_id
FROM unnest(%(users)s::uuid[], %(ids)s::text[]) AS k(user_id, external_id)
WHERE EXISTS (SELECT 1 FROM day_table d
              WHERE d.user_id = k.user_id AND d.external_id = k.external_id)
   OR CASE WHEN k.external_id
                ~* '^cogd:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
           -- CASE: the cast runs only on what the pattern let through
           THEN EXISTS (SELECT 1 FROM day_table d WHERE d.entry_id = substr(k.external_id, 6)::uuid
                          AND d.user_id = k.user_id)
           ELSE false END;

-- name: importer_session_owner
-- an existing session by its key (external id, or its uuid as text) and its owner; keys
-- are unique per user (revision 0019), so of several users' sessions of one key, that of
-- %(handle)s (who the line would make the owner) first, else the oldest
SELECT s.session_id, s.user_id FROM sessions s JOIN users u ON u.user_id = s.user_id
WHERE s.external_id = %(key)s OR s.session_id::text = lower(%(key)s)
ORDER BY coalesce(s.external_id = %(key)s, false) DESC, u.handle = %(handle)s DESC,
         s.started_at, s.session_id
LIMIT 1;
