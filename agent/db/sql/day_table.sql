-- day_table, the hippocampus's record of every exchange (agent/db/day_table.py): the one
-- insert every writer uses (turns, imports, epiphanies), and what the write path reads.

-- name: day_table_insert
-- the turn number is the session's next, computed here and nowhere else; an imported
-- external_id, or an (inbox_id, role) written before, inserts nothing
INSERT INTO day_table (session_id, user_id, user_tier, role, speaker, content,
                       universal_embedding, native_embedding, native_model, turn_number,
                       token_count, inbox_id, external_id, message_type, created_at,
                       index_text, index_tsv, index_version, index_embedding,
                       epiphany_metadata)
VALUES (%(session_id)s, %(user_id)s, %(user_tier)s, %(role)s, %(speaker)s, %(content)s,
        %(universal)s::vector, %(native)s::halfvec, %(native_model)s,
        (SELECT coalesce(max(turn_number), 0) + 1 FROM day_table
          WHERE session_id = %(session_id)s),
        %(tokens)s, %(inbox_id)s, %(external_id)s, %(message_type)s,
        coalesce(%(created_at)s, now()), %(index_text)s, %(index_tsv)s::tsvector,
        %(index_version)s, %(contextual)s::vector, %(epiphany_metadata)s::jsonb)
ON CONFLICT DO NOTHING
RETURNING entry_id, turn_number;

-- name: day_table_vector_pending
-- Turns whose contextual vector is still to be embedded: written by the live loop with
-- [recall] index_vector_after_commit (filled right after its reply commits), or left so by
-- a crash in between; oldest first (ix_day_table_vector_pending, revision 0016).
SELECT entry_id, index_text FROM day_table
WHERE index_embedding IS NULL AND index_text IS NOT NULL
ORDER BY created_at, entry_id
LIMIT %(k)s;

-- name: day_table_vector_fill
UPDATE day_table SET index_embedding = %(vector)s::vector
WHERE entry_id = %(entry_id)s AND index_embedding IS NULL;

-- name: day_table_last_turn
-- the session's last turn: what a short reply answers (agent/domain/contextual.py)
SELECT speaker, role, content FROM day_table
WHERE session_id = %(session_id)s ORDER BY turn_number DESC NULLS LAST LIMIT 1;

-- name: entry_gate_insert
INSERT INTO gate_decisions (gate, entry_id, session_id, decision, score, signals, reason)
VALUES ('entry', %(entry_id)s, %(session_id)s, %(decision)s, %(score)s, %(signals)s::jsonb,
        %(reason)s)
RETURNING decision_id;

-- name: scratch_insert
INSERT INTO scratch_buffer (entry_id, session_id, user_id, content, signals)
VALUES (%(entry_id)s, %(session_id)s, %(user_id)s, %(content)s, %(signals)s::jsonb)
RETURNING id;

-- name: day_table_user_turn_of_inbox
-- the user turn an inbox message wrote (before a crash, when the loop takes it over)
SELECT entry_id, content FROM day_table WHERE inbox_id = %(inbox_id)s AND role = 'user';

-- name: day_table_window
-- the session's dialogue, newest first: the rolling window is cut from it
SELECT entry_id, role, content, coalesce(token_count, 0)
FROM day_table
WHERE session_id = %(session_id)s AND message_type = 'dialogue'
ORDER BY turn_number DESC
LIMIT %(limit)s;

-- name: day_table_previous_exchange
-- the session's last reply before a user turn (none: the session's first exchange) and
-- whether it came through System 2 (an escalation row on the user turn it answered)
SELECT EXISTS (
    SELECT 1 FROM escalations e
    WHERE e.entry_id = (SELECT u.entry_id FROM day_table u
                        WHERE u.session_id = a.session_id AND u.role = 'user'
                          AND u.turn_number < a.turn_number
                        ORDER BY u.turn_number DESC LIMIT 1))
FROM day_table c
JOIN LATERAL (SELECT p.session_id, p.turn_number FROM day_table p
              WHERE p.session_id = c.session_id AND p.role = 'assistant'
                AND p.message_type = 'dialogue' AND p.turn_number < c.turn_number
              ORDER BY p.turn_number DESC LIMIT 1) a ON true
WHERE c.entry_id = %(entry_id)s;

-- name: day_table_previous_user_similarity
-- how close a user turn is to the session's user turn before it (a topic change)
SELECT 1 - (p.universal_embedding <=> c.universal_embedding)
FROM day_table c, day_table p
WHERE c.entry_id = %(entry_id)s AND p.session_id = c.session_id AND p.role = 'user'
  AND p.turn_number < c.turn_number AND p.universal_embedding IS NOT NULL
ORDER BY p.turn_number DESC LIMIT 1;
