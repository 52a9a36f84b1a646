-- The contextual index (revision 0007; agent/services/memory/indexing.py): rows whose index entry
-- is missing or was built by an older recipe, and the updates that rebuild it. The
-- lexicon trigger on each table turns index_tsv into lexical_postings.

-- name: index_pending_counts
-- (a turn also counts while its contextual vector is still to be embedded: written by the
-- live loop with [recall] index_vector_after_commit and not filled yet)
SELECT (SELECT count(*) FROM day_table
         WHERE index_version IS NULL OR index_version < %(version)s
            OR (index_embedding IS NULL AND index_text IS NOT NULL)),
       (SELECT count(*) FROM memories
         WHERE index_version IS NULL OR index_version < %(version)s),
       (SELECT count(*) FROM holographic_blocks
         WHERE index_version IS NULL OR index_version < %(version)s);

-- name: index_turns
-- A batch of turns to index, each with the turn before it in its session (what a short
-- reply answers).
SELECT d.entry_id, d.content, d.role, d.speaker, d.created_at, p.content, p.role, p.speaker
FROM day_table d
LEFT JOIN LATERAL (
    SELECT content, role, speaker FROM day_table p
    WHERE p.session_id = d.session_id AND p.turn_number < d.turn_number
    ORDER BY p.turn_number DESC LIMIT 1) p ON true
WHERE d.index_version IS NULL OR d.index_version < %(version)s
ORDER BY d.created_at, d.entry_id
LIMIT %(k)s;

-- name: index_turn_update
UPDATE day_table SET index_text = %(text)s, index_tsv = %(tsv)s::tsvector,
       index_version = %(version)s, index_embedding = %(universal)s::vector
WHERE entry_id = %(id)s;

-- name: index_memories
-- Memories to index, with their source turn's role, speaker and date.
SELECT m.memory_id, m.content, d.role, d.speaker, d.created_at
FROM memories m LEFT JOIN day_table d ON d.entry_id = m.source_entry_id
WHERE m.index_version IS NULL OR m.index_version < %(version)s
ORDER BY m.created_at, m.memory_id
LIMIT %(k)s;

-- name: index_memory_update
UPDATE memories SET index_text = %(text)s, index_tsv = %(tsv)s::tsvector,
       index_version = %(version)s
WHERE memory_id = %(id)s;

-- name: index_blocks
SELECT block_id, prose, arc_start_time FROM holographic_blocks
WHERE index_version IS NULL OR index_version < %(version)s
ORDER BY arc_start_time, block_id
LIMIT %(k)s;

-- name: index_block_update
UPDATE holographic_blocks SET index_text = %(text)s, index_tsv = %(tsv)s::tsvector,
       index_version = %(version)s
WHERE block_id = %(id)s;

-- name: index_reset
-- `cogd reindex --all`: mark every row for rebuilding (index_tsv stays until rebuilt).
WITH d AS (UPDATE day_table SET index_version = NULL WHERE index_version IS NOT NULL),
     m AS (UPDATE memories SET index_version = NULL WHERE index_version IS NOT NULL)
UPDATE holographic_blocks SET index_version = NULL WHERE index_version IS NOT NULL;

