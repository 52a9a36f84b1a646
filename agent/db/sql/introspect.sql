-- What the REPL and the CLI show about memory (agent/services/introspect.py).

-- name: introspect_processes
SELECT name, pid, state, alive FROM v_processes ORDER BY name;

-- name: introspect_memory_containing
SELECT memory_id FROM memories WHERE strpos(lower(content), lower(%s)) > 0
ORDER BY status = 'active' DESC, created_at DESC LIMIT 1;

-- name: introspect_remember
INSERT INTO memories (user_id, session_id, source_entry_id, memory_type, content, universal_embedding, native_embedding, native_model, importance, metadata) SELECT user_id, session_id, entry_id, %s, content, universal_embedding, native_embedding, native_model, 0.8, %s::jsonb
FROM day_table WHERE entry_id = %s RETURNING memory_id;

-- name: introspect_archive_memory
UPDATE memories SET status = 'archived', updated_at = now() WHERE memory_id = %s
RETURNING memory_id;

-- name: introspect_source_turn
SELECT created_at, role, left(content, 200) FROM day_table WHERE entry_id = %s;
