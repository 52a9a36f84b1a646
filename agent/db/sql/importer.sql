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

-- name: importer_last_turns
-- each session's last turn (what a short reply at the start of an import batch answers:
-- day_table_last_turn for many sessions in one query)
SELECT DISTINCT ON (session_id) session_id, speaker, role, content FROM day_table
WHERE session_id = ANY(%(sessions)s::uuid[])
ORDER BY session_id, turn_number DESC NULLS LAST;

-- name: importer_insert_turns
-- a batch of imported turns in one statement (the rows of day_table_insert, one per
-- element of the arrays, in order): each session's turns numbered after its last, in the
-- batch's order; a (user_id, external_id) already there inserts nothing
-- (uq_day_table_user_external_id). The lexicon triggers run once for the statement.
WITH r AS (
    SELECT * FROM unnest(%(session_id)s::uuid[], %(user_id)s::uuid[], %(user_tier)s::text[],
                         %(role)s::text[], %(speaker)s::text[], %(content)s::text[],
                         %(universal)s::text[], %(native)s::text[], %(tokens)s::int[],
                         %(external_id)s::text[], %(created_at)s::timestamptz[],
                         %(index_text)s::text[], %(index_tsv)s::text[],
                         %(contextual)s::text[])
        WITH ORDINALITY AS r(session_id, user_id, user_tier, role, speaker, content,
                             universal, native, tokens, external_id, created_at,
                             index_text, index_tsv, contextual, ord)
), base AS (
    SELECT s.session_id,
           (SELECT coalesce(max(d.turn_number), 0) FROM day_table d
             WHERE d.session_id = s.session_id) AS n
    FROM (SELECT DISTINCT session_id FROM r) s
)
INSERT INTO day_table (session_id, user_id, user_tier, role, speaker, content,
                       universal_embedding, native_embedding, native_model, turn_number,
                       token_count, external_id, message_type, created_at,
                       index_text, index_tsv, index_version, index_embedding)
SELECT r.session_id, r.user_id, r.user_tier, r.role, r.speaker, r.content,
       r.universal::vector, r.native::halfvec, %(native_model)s,
       base.n + row_number() OVER (PARTITION BY r.session_id ORDER BY r.ord),
       r.tokens, r.external_id, 'dialogue', coalesce(r.created_at, now()),
       r.index_text, r.index_tsv::tsvector, %(index_version)s, r.contextual::vector
FROM r JOIN base USING (session_id)
ORDER BY r.ord
ON CONFLICT DO NOTHING
RETURNING entry_id, turn_number, user_id::text, external_id;

-- name: importer_insert_gates
-- the entry gate's decisions on a batch of imported turns (entry_gate_insert's rows)
INSERT INTO gate_decisions (gate, entry_id, session_id, decision, score, signals, reason)
SELECT 'entry', g.entry_id, g.session_id, g.decision, g.score, g.signals, g.reason
FROM unnest(%(entry_id)s::uuid[], %(session_id)s::uuid[], %(decision)s::text[],
            %(score)s::float8[], %(signals)s::jsonb[], %(reason)s::text[])
     AS g(entry_id, session_id, decision, score, signals, reason);

-- name: importer_insert_scratch
-- the batch's turns the entry gate held (scratch_insert's rows)
INSERT INTO scratch_buffer (entry_id, session_id, user_id, content, signals)
SELECT s.entry_id, s.session_id, s.user_id, s.content, s.signals
FROM unnest(%(entry_id)s::uuid[], %(session_id)s::uuid[], %(user_id)s::uuid[],
            %(content)s::text[], %(signals)s::jsonb[])
     AS s(entry_id, session_id, user_id, content, signals);
