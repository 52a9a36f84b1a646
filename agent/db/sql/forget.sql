-- Forgetting (agent/services/memory/forget.py): the one place cogd destroys content, on request.
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
e AS (DELETE FROM escalations WHERE entry_id = ANY(%(turns)s::uuid[]) RETURNING 1),
p AS (DELETE FROM profile_claims WHERE source_entry_id = ANY(%(turns)s::uuid[]) RETURNING 1)
SELECT (SELECT count(*) FROM g) + (SELECT count(*) FROM c) + (SELECT count(*) FROM l)
     + (SELECT count(*) FROM i) + (SELECT count(*) FROM s) + (SELECT count(*) FROM r)
     + (SELECT count(*) FROM e) + (SELECT count(*) FROM p);

-- name: forget_delete_memories
DELETE FROM memories WHERE memory_id = ANY(%(memories)s::uuid[]);

-- name: forget_delete_turns
DELETE FROM day_table WHERE entry_id = ANY(%(turns)s::uuid[]);

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

-- name: forget_owner_sessions
SELECT session_id FROM sessions WHERE user_id IS NOT DISTINCT FROM %s;

-- name: forget_catalog_keys
-- the erase of a user (agent/db/scrub.py: erase_user) reads the schema, not a list:
-- every table of the public schema with its primary key's columns, in key order
SELECT c.relname::text,
       array(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.n ORDER BY k.o)
FROM pg_class c LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
ORDER BY 1;

-- name: forget_catalog_user_columns
-- the columns that name a user: a foreign key to users, or a column named user_id
-- without one (lexical_postings keeps its document's user_id, by trigger)
SELECT c.relname::text, a.attname::text
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
  AND a.attnum > 0 AND NOT a.attisdropped AND c.relname <> 'users'
  AND (a.attname = 'user_id' OR EXISTS (
      SELECT 1 FROM pg_constraint f
      WHERE f.contype = 'f' AND f.conrelid = c.oid AND f.conkey = ARRAY[a.attnum]
        AND f.confrelid = 'public.users'::regclass))
ORDER BY 1, 2;

-- name: forget_catalog_fks
-- every foreign key between tables of the public schema: (table, its columns, the table
-- it references, those columns, ON DELETE action: a no action, r restrict, c cascade,
-- n set null, d set default; whether every column of it may be NULL)
SELECT c.relname::text,
       array(SELECT a.attname::text FROM unnest(f.conkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = f.conrelid AND a.attnum = k.n ORDER BY k.o),
       p.relname::text,
       array(SELECT a.attname::text FROM unnest(f.confkey) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = f.confrelid AND a.attnum = k.n ORDER BY k.o),
       f.confdeltype::text,
       NOT EXISTS (SELECT 1 FROM unnest(f.conkey) k(n) JOIN pg_attribute a
                   ON a.attrelid = f.conrelid AND a.attnum = k.n WHERE a.attnotnull)
FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid JOIN pg_class p ON p.oid = f.confrelid
WHERE f.contype = 'f' AND c.relnamespace = 'public'::regnamespace
  AND p.relnamespace = 'public'::regnamespace
ORDER BY 1, 2;

-- name: forget_term_df
-- how many turns hold each term (a span of a forgotten text is distinctive when one of its
-- terms is rare: agent/services/memory/forget.py, SPAN_WORDS)
SELECT term, df FROM lexical_terms WHERE kind = 'day_table' AND term = ANY(%s::text[]);

-- name: forget_day_table_reembed
-- a turn that quoted a forgotten text, the quote cut out: its vectors and index entry
-- are rebuilt from what is left
UPDATE day_table SET universal_embedding = %(universal)s::vector,
       native_embedding = %(native)s::halfvec, index_version = NULL
WHERE entry_id = %(id)s;

-- name: forget_memories_reembed
UPDATE memories SET universal_embedding = %(universal)s::vector,
       native_embedding = %(native)s::halfvec, index_version = NULL
WHERE memory_id = %(id)s;

-- name: forget_night_briefs
-- the night cycle's briefs kept in Postgres (one per run and user): an item quoting a
-- forgotten text goes, as in the brief files
SELECT run_id, user_id, content FROM night_briefs;

-- name: forget_night_brief_update
UPDATE night_briefs SET content = %s WHERE run_id = %s AND user_id = %s;

-- name: forget_has_night_briefs
-- NULL before the revision that keeps briefs in Postgres
SELECT to_regclass('public.night_briefs');
