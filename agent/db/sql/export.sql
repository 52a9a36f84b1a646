-- Exports (agent/services/access/exporter.py): one user's turns in `cogd import`'s JSONL format.

-- name: export_snapshot
-- the count and the rows come from one snapshot, and an export never writes
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;

-- name: export_count
-- a turn is the user's by day_table.user_id, else (NULL there) by its session's user
SELECT count(*)
FROM day_table d JOIN sessions s ON s.session_id = d.session_id
WHERE (d.user_id = %(user_id)s OR (d.user_id IS NULL AND s.user_id = %(user_id)s))
  AND d.message_type = ANY(%(message_types)s);

-- name: export_turns
-- oldest first; ties (one transaction's turns share now()) by session key, then the
-- session's turn order; COLLATE "C" so two databases sort the keys alike
SELECT d.entry_id,
       coalesce(s.external_id, s.session_id::text) AS session,
       d.speaker,
       d.role,
       d.content,
       d.created_at,
       coalesce(d.external_id, %(id_prefix)s || d.entry_id::text) AS external_id
FROM day_table d JOIN sessions s ON s.session_id = d.session_id
WHERE (d.user_id = %(user_id)s OR (d.user_id IS NULL AND s.user_id = %(user_id)s))
  AND d.message_type = ANY(%(message_types)s)
ORDER BY d.created_at, coalesce(s.external_id, s.session_id::text) COLLATE "C",
         d.turn_number NULLS LAST, d.entry_id;
