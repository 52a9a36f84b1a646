-- The idle default-mode network (agent/services/dmn.py).

-- name: dmn_gut_signal
INSERT INTO gut_signals (delta_norm, delta, layers, action)
VALUES (%s, %s::vector, %s::jsonb, 'logged');

-- name: dmn_recent_user_turns
SELECT d.entry_id, d.session_id, d.user_id, d.content, d.created_at, d.universal_embedding::text, (SELECT p.universal_embedding::text
FROM day_table p WHERE p.session_id = d.session_id AND p.role = 'user'
  AND p.turn_number < d.turn_number ORDER BY p.turn_number DESC LIMIT 1) FROM day_table d
WHERE d.role = 'user' AND d.message_type = 'dialogue'
  AND d.created_at > greatest(%s::timestamptz, %s) ORDER BY d.created_at LIMIT 200;

-- name: dmn_thought_already_surfaced
SELECT 1 FROM thoughts WHERE kind = 'proactive_recall' AND source_ids @> %s::jsonb
  AND created_at > %s;

-- name: dmn_thought_insert
INSERT INTO thoughts (kind, content, theme, source_ids, session_id, created_at)
VALUES (%s, %s, %s, %s::jsonb, %s, %s) RETURNING thought_id;

-- name: dmn_session_entries
SELECT entry_id FROM day_table WHERE session_id = %s;

-- name: dmn_open_intentions
SELECT intention_id, kind, content, carried_count FROM intentions WHERE status = 'open'
  AND user_id IS NOT DISTINCT FROM %s ORDER BY urgency DESC, created_at LIMIT %s;

-- name: dmn_recent_turns_centroid
SELECT avg(universal_embedding)::text FROM (SELECT universal_embedding FROM day_table
WHERE universal_embedding IS NOT NULL ORDER BY created_at DESC LIMIT 10) t;

-- name: dmn_identity_values
SELECT name, description, weight FROM identity WHERE NOT is_boundary;

-- name: dmn_goal_values
SELECT name, description, weight FROM goals WHERE status = 'active';

-- name: dmn_theme_thought_count
SELECT count(*) FROM thoughts WHERE theme = %s;

-- name: dmn_pressure_waiting
SELECT exists(SELECT 1 FROM intentions WHERE status = 'open' AND carried_count >= %s)
  OR exists(SELECT 1 FROM inbox WHERE status = 'pending');

-- name: dmn_recent_memories_centroid
SELECT avg(universal_embedding)::text FROM (SELECT universal_embedding FROM memories
WHERE status = 'active' AND universal_embedding IS NOT NULL ORDER BY importance DESC LIMIT 50) t;

-- name: dmn_recently_recalled
SELECT 1 FROM recall_log r, jsonb_array_elements(r.items) e WHERE r.created_at > %s
  AND e->>'id' = %s AND e->>'verdict' <> 'no_match' LIMIT 1;

-- name: dmn_identity_texts
SELECT coalesce(nullif(description, ''), name), weight FROM identity WHERE NOT is_boundary;

-- name: dmn_goal_texts
SELECT coalesce(nullif(description, ''), name), weight FROM goals WHERE status = 'active';

-- name: dmn_surfaceable_memories
-- the most important active memories, each with its association to the attention vector
-- (0.0 without one)
SELECT memory_id, content, importance, access_count, coalesce(last_accessed, created_at),
       coalesce(1 - (universal_embedding <=> %(attention)s::vector), 0.0)
FROM memories WHERE status = 'active'
ORDER BY importance DESC, created_at DESC
LIMIT 200;
