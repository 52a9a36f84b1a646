-- Forgetting (agent/services/forget.py): the one place cogd destroys content, on request.
-- %(uid)s: the owner (NULL: rows of no user).

-- name: forget_memory_row
SELECT memory_id, user_id, content, source_entry_id FROM memories WHERE memory_id = %s;

-- name: forget_turn_content
SELECT content FROM day_table WHERE entry_id = %s;

-- name: forget_doomed_memories
-- the memories, those of the same turns, every memory of the owner holding one of the
-- texts, and the insights that supersede any of them (they carry the fact), transitively
WITH RECURSIVE m AS (
    SELECT memory_id FROM memories
    WHERE memory_id = ANY(%(memories)s::uuid[])
       OR (user_id IS NOT DISTINCT FROM %(uid)s::uuid
           AND (source_entry_id = ANY(%(turns)s::uuid[])
                OR EXISTS (SELECT 1 FROM unnest(%(needles)s::text[]) n
                           WHERE strpos(content, n) > 0)))
    UNION
    SELECT l.source_id FROM memory_links l JOIN m ON l.target_id = m.memory_id
    WHERE l.link_type = 'supersedes'
)
SELECT memory_id FROM m;

-- name: forget_doomed_turns
SELECT entry_id FROM day_table
WHERE entry_id = ANY(%(turns)s::uuid[])
   OR (user_id IS NOT DISTINCT FROM %(uid)s::uuid
       AND EXISTS (SELECT 1 FROM unnest(%(needles)s::text[]) n WHERE strpos(content, n) > 0));

-- name: forget_user_rows
-- a whole user: their memories, turns (theirs, or in their sessions), blocks, sessions
SELECT (SELECT coalesce(array_agg(memory_id), '{}') FROM memories WHERE user_id = %(uid)s),
       (SELECT coalesce(array_agg(entry_id), '{}') FROM day_table
        WHERE user_id = %(uid)s
           OR session_id IN (SELECT session_id FROM sessions WHERE user_id = %(uid)s)),
       (SELECT coalesce(array_agg(block_id), '{}') FROM holographic_blocks
        WHERE user_id = %(uid)s
           OR session_id IN (SELECT session_id FROM sessions WHERE user_id = %(uid)s)),
       (SELECT coalesce(array_agg(session_id), '{}') FROM sessions WHERE user_id = %(uid)s);

-- name: forget_user_texts
-- what a user said, to find it where it is kept without its owner (cluster summaries,
-- briefs, logs): their turns, memories and the live zones of their blocks
SELECT content FROM day_table WHERE entry_id = ANY(%(turns)s::uuid[])
UNION SELECT content FROM memories WHERE memory_id = ANY(%(memories)s::uuid[])
UNION SELECT z ->> 'content' FROM holographic_blocks b,
      jsonb_array_elements(coalesce(b.prose -> 'live_zones', '[]'::jsonb)) z
WHERE b.block_id = ANY(%(blocks)s::uuid[]) AND z ->> 'content' IS NOT NULL;

-- name: forget_restore_sources
-- sources of a forgotten insight that no other insight supersedes are active again:
-- recall finds them in the insight's place (nothing lost but what was forgotten)
UPDATE memories s SET status = 'active', updated_at = now()
WHERE s.status = 'superseded' AND NOT s.memory_id = ANY(%(memories)s::uuid[])
  AND EXISTS (SELECT 1 FROM memory_links l WHERE l.target_id = s.memory_id
              AND l.link_type = 'supersedes' AND l.source_id = ANY(%(memories)s::uuid[]))
  AND NOT EXISTS (SELECT 1 FROM memory_links l WHERE l.target_id = s.memory_id
                  AND l.link_type = 'supersedes'
                  AND NOT l.source_id = ANY(%(memories)s::uuid[]))
RETURNING memory_id;

-- name: forget_delete_references
-- what points at the forgotten memories and turns (FKs without a cascade, and logs)
WITH g AS (DELETE FROM gate_decisions WHERE memory_id = ANY(%(memories)s::uuid[])
               OR entry_id = ANY(%(turns)s::uuid[])
               OR scratch_id IN (SELECT id FROM scratch_buffer
                                 WHERE entry_id = ANY(%(turns)s::uuid[])) RETURNING 1),
c AS (DELETE FROM memory_citations WHERE cited_id = ANY(%(memories)s::uuid[])
          OR entry_id = ANY(%(turns)s::uuid[]) RETURNING 1),
l AS (DELETE FROM memory_links WHERE source_id = ANY(%(memories)s::uuid[])
          OR target_id = ANY(%(memories)s::uuid[]) RETURNING 1),
i AS (DELETE FROM intentions WHERE source_entry_id = ANY(%(turns)s::uuid[]) RETURNING 1),
s AS (DELETE FROM scratch_buffer WHERE entry_id = ANY(%(turns)s::uuid[]) RETURNING 1),
r AS (DELETE FROM recall_log WHERE entry_id = ANY(%(turns)s::uuid[]) RETURNING 1),
e AS (DELETE FROM escalations WHERE entry_id = ANY(%(turns)s::uuid[]) RETURNING 1)
SELECT (SELECT count(*) FROM g) + (SELECT count(*) FROM c) + (SELECT count(*) FROM l)
     + (SELECT count(*) FROM i) + (SELECT count(*) FROM s) + (SELECT count(*) FROM r)
     + (SELECT count(*) FROM e);

-- name: forget_delete_memories
DELETE FROM memories WHERE memory_id = ANY(%(memories)s::uuid[]);

-- name: forget_delete_turns
DELETE FROM day_table WHERE entry_id = ANY(%(turns)s::uuid[]);

-- name: forget_unlink_blocks
-- other blocks' links to the forgotten blocks (self-references without a cascade)
WITH r AS (DELETE FROM block_relationships WHERE source_block_id = ANY(%(blocks)s::uuid[])
               OR target_block_id = ANY(%(blocks)s::uuid[]) RETURNING 1)
UPDATE holographic_blocks SET
    parent_metablock_id = CASE WHEN parent_metablock_id = ANY(%(blocks)s::uuid[]) THEN NULL
                               ELSE parent_metablock_id END,
    derived_from = CASE WHEN derived_from = ANY(%(blocks)s::uuid[]) THEN NULL ELSE derived_from END,
    continued_by = CASE WHEN continued_by = ANY(%(blocks)s::uuid[]) THEN NULL ELSE continued_by END,
    continues_from = CASE WHEN continues_from = ANY(%(blocks)s::uuid[]) THEN NULL
                          ELSE continues_from END
WHERE NOT block_id = ANY(%(blocks)s::uuid[])
  AND (parent_metablock_id = ANY(%(blocks)s::uuid[]) OR derived_from = ANY(%(blocks)s::uuid[])
       OR continued_by = ANY(%(blocks)s::uuid[]) OR continues_from = ANY(%(blocks)s::uuid[]));

-- name: forget_delete_blocks
DELETE FROM holographic_blocks WHERE block_id = ANY(%(blocks)s::uuid[]);

-- name: forget_delete_user
-- the user's sessions and the user (after every row that references them)
WITH t AS (DELETE FROM api_tokens WHERE user_id = %(uid)s RETURNING 1),
s AS (DELETE FROM sessions WHERE user_id = %(uid)s RETURNING 1)
DELETE FROM users WHERE user_id = %(uid)s;

-- name: forget_block_reembed
UPDATE holographic_blocks SET universal_embedding = %(universal)s::vector,
       native_embedding = %(native)s::vector, index_version = NULL
WHERE block_id = %(id)s;

-- name: forget_unused_terms
-- terms no document holds any more (the triggers keep them at df 0)
DELETE FROM lexical_terms WHERE df = 0;

-- name: forget_quoting_turns
-- the owner's other turns whose index entry quotes a forgotten text (a short reply's
-- index quotes the turn before it): their index is rebuilt
SELECT entry_id FROM day_table
WHERE user_id IS NOT DISTINCT FROM %(uid)s::uuid AND NOT entry_id = ANY(%(turns)s::uuid[])
  AND EXISTS (SELECT 1 FROM unnest(%(needles)s::text[]) n
              WHERE strpos(index_text, left(regexp_replace(n, '\s+', ' ', 'g'), 60)) > 0);

-- name: forget_reindex_turns
UPDATE day_table SET index_version = NULL WHERE entry_id = ANY(%s);

-- name: forget_gate_of_scratch
DELETE FROM gate_decisions WHERE scratch_id = ANY(%s);

-- name: forget_session_outbox
DELETE FROM outbox WHERE session_id = ANY(%s);

-- name: forget_session_inbox
DELETE FROM inbox WHERE session_id = ANY(%s);

-- name: forget_session_escalations
DELETE FROM escalations WHERE session_id = ANY(%s);

-- name: forget_session_gate_decisions
DELETE FROM gate_decisions WHERE session_id = ANY(%s);

-- name: forget_session_recall_log
DELETE FROM recall_log WHERE session_id = ANY(%s);

-- name: forget_session_thoughts
DELETE FROM thoughts WHERE session_id = ANY(%s);

-- name: forget_session_scratch_buffer
DELETE FROM scratch_buffer WHERE session_id = ANY(%s);

-- name: forget_session_continuation_notes
DELETE FROM continuation_notes WHERE session_id = ANY(%s);

-- name: forget_user_intentions
DELETE FROM intentions WHERE user_id = %s;

-- name: forget_user_thoughts
DELETE FROM thoughts WHERE user_id = %s;

-- name: forget_user_workflows
DELETE FROM workflows WHERE user_id = %s;

-- name: forget_user_principles
DELETE FROM principles WHERE user_id = %s;

-- name: forget_memory_models
-- the cognitive models built from a forgotten memory (they carry what it said, as the
-- insights over it do), and the principles crystallised from those models
WITH m AS (DELETE FROM cognitive_models c
           WHERE EXISTS (SELECT 1 FROM model_evidence e
                         WHERE e.model_id = c.model_id AND e.note = 'built from'
                           AND e.memory_id = ANY(%(memories)s::uuid[]))
           RETURNING c.model_id),
p AS (DELETE FROM principles p USING m WHERE p.source_ids ? ('model:' || m.model_id::text)
      RETURNING 1)
SELECT (SELECT count(*) FROM m), (SELECT count(*) FROM p);

-- name: forget_user_models
-- their model_evidence rows go with them (ON DELETE CASCADE)
DELETE FROM cognitive_models WHERE user_id = %s;

-- name: forget_owner_sessions
SELECT session_id FROM sessions WHERE user_id IS NOT DISTINCT FROM %s;
