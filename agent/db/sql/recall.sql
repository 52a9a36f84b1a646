-- Recall hot path (issue #4): one dense query per table so each uses its HNSW
-- index, one sparse (full text) query per table. Pasteable into psql: replace
-- %(name)s with values. Vectors are pgvector text ('[0.1,0.2,...]').
-- %(user_id)s scopes recall to one user's rows (plus rows that belong to no user);
-- NULL searches everyone's (operator tools such as `cogd recall` without --user).

-- name: recall_dense_day_table
-- Nearest day_table entries by universal embedding (HNSW, cosine).
SELECT entry_id, session_id, role, content, created_at, external_id, token_count,
       universal_embedding <=> %(query)s::vector AS distance
FROM day_table
WHERE universal_embedding IS NOT NULL AND (%(user_id)s::uuid IS NULL OR user_id IS NULL OR user_id = %(user_id)s::uuid)
ORDER BY universal_embedding <=> %(query)s::vector
LIMIT %(k)s;

-- name: recall_dense_memories
-- Nearest memories (active, superseded and archived: consolidation lowers
-- importance, it never hides a memory).
SELECT m.memory_id, m.memory_type, m.content, m.created_at, m.importance, m.source_entry_id,
       m.status, m.distance, d.external_id
FROM (SELECT memory_id, memory_type, content, created_at, importance, source_entry_id, status,
             universal_embedding <=> %(query)s::vector AS distance
      FROM memories
      WHERE universal_embedding IS NOT NULL AND (%(user_id)s::uuid IS NULL OR user_id IS NULL OR user_id = %(user_id)s::uuid)
      ORDER BY universal_embedding <=> %(query)s::vector
      LIMIT %(k)s) m
LEFT JOIN day_table d ON d.entry_id = m.source_entry_id
ORDER BY m.distance;

-- name: recall_dense_blocks
-- Nearest holographic blocks (formed by the night cycle).
SELECT block_id, session_id, prose, arc_start_time, coherence_gain,
       universal_embedding <=> %(query)s::vector AS distance
FROM holographic_blocks
WHERE universal_embedding IS NOT NULL AND (%(user_id)s::uuid IS NULL OR user_id IS NULL OR user_id = %(user_id)s::uuid)
ORDER BY universal_embedding <=> %(query)s::vector
LIMIT %(k)s;

-- name: recall_sparse_day_table
-- Full text over day_table ('simple' config + CJK bigrams); %(tsquery)s is an
-- OR of quoted prefix lexemes ('allerg':*) built by
-- agent/memory/recall.py from agent/domain/lexical.py terms.
SELECT d.entry_id, d.session_id, d.role, d.content, d.created_at, d.external_id,
       d.token_count, ts_rank_cd(d.content_tsv, q) AS rank
FROM day_table d, to_tsquery('simple', %(tsquery)s) q
WHERE d.content_tsv @@ q AND (%(user_id)s::uuid IS NULL OR d.user_id IS NULL OR d.user_id = %(user_id)s::uuid)
ORDER BY rank DESC, d.created_at DESC
LIMIT %(k)s;

-- name: recall_sparse_memories
SELECT m.memory_id, m.memory_type, m.content, m.created_at, m.importance,
       m.source_entry_id, m.status, ts_rank_cd(m.content_tsv, q) AS rank,
       (SELECT external_id FROM day_table d WHERE d.entry_id = m.source_entry_id)
FROM memories m, to_tsquery('simple', %(tsquery)s) q
WHERE m.content_tsv @@ q AND (%(user_id)s::uuid IS NULL OR m.user_id IS NULL OR m.user_id = %(user_id)s::uuid)
ORDER BY rank DESC, m.created_at DESC
LIMIT %(k)s;

-- name: similarity_by_ids_day_table
-- Cosine similarity of given entries to the query (for items found only by sparse).
SELECT entry_id, 1 - (universal_embedding <=> %(query)s::vector) AS similarity
FROM day_table WHERE entry_id = ANY(%(ids)s) AND universal_embedding IS NOT NULL;

-- name: similarity_by_ids_memories
SELECT memory_id, 1 - (universal_embedding <=> %(query)s::vector) AS similarity
FROM memories WHERE memory_id = ANY(%(ids)s) AND universal_embedding IS NOT NULL;

-- name: term_doc_freq
-- Document frequency of each query term (a prefix) in day_table, capped at
-- %(cap)s so a common term costs little; feeds the IDF weights of the verdict.
SELECT t, (SELECT count(*) FROM (
              SELECT 1 FROM day_table
              WHERE content_tsv @@ to_tsquery('simple', '''' || t || ''':*')
              LIMIT %(cap)s) s) AS df
FROM unnest(%(terms)s::text[]) AS t;

-- name: day_table_size
-- day_table's row count: the planner's estimate once the table is large (cheap),
-- an exact count while it is small or not yet analysed.
SELECT CASE WHEN reltuples < 10000 THEN (SELECT count(*) FROM day_table)
            ELSE reltuples::bigint END
FROM pg_class WHERE relname = 'day_table';

-- name: goal_similarity_day_table
-- Cosine similarity of given entries to the active goals' centroid (the goal boost).
SELECT entry_id, 1 - (universal_embedding <=> %(goal)s::vector)
FROM day_table WHERE entry_id = ANY(%(ids)s) AND universal_embedding IS NOT NULL;

-- name: goal_similarity_memories
SELECT memory_id, 1 - (universal_embedding <=> %(goal)s::vector)
FROM memories WHERE memory_id = ANY(%(ids)s) AND universal_embedding IS NOT NULL;
