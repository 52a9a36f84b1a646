-- What the REPL and the CLI show about memory (agent/services/access/introspect.py).

-- name: introspect_processes
SELECT name, pid, state, alive FROM v_processes ORDER BY name;

-- name: introspect_memory_containing
-- the newest memory whose text contains %(text)s, an active one first; among one user's
-- memories and those of no user (%(user_id)s NULL: every user's, the operator's `cogd why`)
SELECT memory_id FROM memories WHERE strpos(lower(content), lower(%(text)s)) > 0
  AND (%(user_id)s::uuid IS NULL OR user_id IS NULL OR user_id = %(user_id)s::uuid)
ORDER BY status = 'active' DESC, created_at DESC LIMIT 1;

-- name: introspect_remember
-- emotion: the imprint, the state recorded for the source turn (seed 000 §3.4)
INSERT INTO memories (user_id, session_id, source_entry_id, memory_type, content, universal_embedding, native_embedding, native_model, importance, metadata, emotion) SELECT d.user_id, d.session_id, d.entry_id, %s, d.content, d.universal_embedding, d.native_embedding, d.native_model, 0.8, %s::jsonb, (SELECT jsonb_build_object('valence', e.valence, 'energy', e.energy, 'openness', e.openness, 'label', e.label) FROM emotional_state e WHERE e.entry_id = d.entry_id)
FROM day_table d WHERE d.entry_id = %s RETURNING memory_id;

-- name: introspect_archive_memory
UPDATE memories SET status = 'archived', updated_at = now() WHERE memory_id = %s
RETURNING memory_id;

-- name: introspect_memory_visible
-- Whether a memory is the user's (or of no user): what the memory API may explain.
SELECT memory_id FROM memories WHERE memory_id = %(memory_id)s
  AND (user_id IS NULL OR user_id = %(user_id)s);

-- name: introspect_latest_brief
-- One user's newest morning brief (night_briefs: their own, never the run's brief.md).
SELECT b.run_id, r.finished_at, b.content FROM night_briefs b
JOIN night_cycle_runs r ON r.run_id = b.run_id
WHERE b.user_id = %(user_id)s AND r.status = 'done'
ORDER BY r.finished_at DESC, b.run_id DESC LIMIT 1;

-- name: introspect_counts_for_user
-- How much memory one user has: turns, memories by status, open intentions.
SELECT (SELECT count(*) FROM day_table WHERE user_id = %(user_id)s),
       (SELECT count(*) FROM memories WHERE user_id = %(user_id)s AND status = 'active'),
       (SELECT count(*) FROM memories WHERE user_id = %(user_id)s AND status <> 'active'),
       (SELECT count(*) FROM intentions WHERE user_id = %(user_id)s AND status = 'open');

-- name: introspect_memories_of_user
-- One user's memories, newest first (every status: consolidation lowers, never hides).
SELECT memory_id, memory_type, content, status, importance, created_at, source_entry_id
FROM memories WHERE user_id = %(user_id)s
  AND (%(status)s::text IS NULL OR status = %(status)s::text)
ORDER BY created_at DESC, memory_id LIMIT %(limit)s OFFSET %(offset)s;

-- name: introspect_memory_of_user
SELECT memory_id, memory_type, content, status, importance, created_at, source_entry_id
FROM memories WHERE memory_id = %(memory_id)s AND user_id = %(user_id)s;

-- name: introspect_memories_not_of_user
-- which of the memories belong to another user (not the user's, not of no user)
SELECT memory_id FROM memories WHERE memory_id = ANY(%(ids)s::uuid[])
  AND user_id IS NOT NULL AND user_id <> %(user_id)s;

-- name: introspect_all_goals
-- the operator's view (`cogd goals`): every active goal, with the user it belongs to
-- (NULL: installation-wide)
SELECT g.name, g.weight, g.description, u.handle
FROM goals g LEFT JOIN users u ON u.user_id = g.user_id
WHERE g.status = 'active' ORDER BY g.weight DESC, g.name;

-- name: introspect_intentions_of_user
-- A user's intentions of one status (NULL: every status), open ones first, due first.
SELECT intention_id, kind, content, due_at, urgency, carried_count, created_at, status,
       resolved_at
FROM intentions WHERE user_id = %(user_id)s AND (%(status)s::text IS NULL OR status = %(status)s)
ORDER BY status <> 'open', due_at NULLS LAST, urgency DESC, created_at DESC LIMIT %(limit)s;

-- name: introspect_corrections_of_user
-- The active corrections a user's prompt may show (theirs and those of no user), newest first.
SELECT memory_id, content, fails_when, fine_when, user_id IS NULL, created_at FROM memories
WHERE memory_type = 'correction' AND status = 'active'
  AND (user_id IS NULL OR user_id = %(user_id)s)
ORDER BY created_at DESC LIMIT %(limit)s;
