-- Recall hot path: one dense query per table so each uses its HNSW index, one BM25
-- query per table over the lexicon of contextual index entries (revision 0007). Pasteable into psql: replace
-- %(name)s with values. Vectors are pgvector text ('[0.1,0.2,...]').
-- %(user_id)s scopes recall to one user's rows (plus rows that belong to no user);
-- NULL searches everyone's (operator tools such as `cogd recall` without --user).
-- The dense lists of turns and memories also return each row's similarity to the
-- question the verdict judges (%(judge)s: the same vector as %(query)s unless the loop
-- searched a compound query) and to the active goals' centroid (%(goal)s; NULL: no goals).
-- The BM25 lists run while the query is embedded, before those vectors exist: their rows'
-- similarities come from similarity_by_ids, sent beside the dense lists (the same round
-- trip); the BM25 lists return NULL in those columns (one row shape per table). Those are computed
-- outside the LIMITed scan, for its k rows only: on a small table the planner sorts every
-- row, and computing them for every row made a 100-turn list ~40 % slower (0.98 against
-- 0.68 ms p50, with a goal vector; each distance detoasts a vector).
-- The outer ORDER BY also restores the exact order an iterative scan relaxes.

-- name: recall_dense_day_table
-- Nearest day_table entries by their contextual vector (the turn in context: who said it,
-- when, what it answers; revision 0007), HNSW, cosine.
SELECT s.entry_id, s.session_id, s.role, s.content, s.created_at, s.external_id,
       s.token_count, s.distance, s.speaker,
       1 - least(s.universal_embedding <=> %(judge)s::vector,
                 s.index_embedding <=> %(judge)s::vector) AS similarity,
       1 - (s.universal_embedding <=> %(goal)s::vector) AS goal_similarity
FROM (SELECT entry_id, session_id, role, content, created_at, external_id, token_count,
             index_embedding <=> %(query)s::vector AS distance, speaker,
             universal_embedding, index_embedding
      FROM day_table
      WHERE index_embedding IS NOT NULL AND (%(user_id)s::uuid IS NULL OR user_id IS NULL
        OR user_id = %(user_id)s::uuid)
      ORDER BY index_embedding <=> %(query)s::vector
      LIMIT %(k)s) s
ORDER BY s.distance;

-- name: recall_dense_day_table_bare
-- Nearest day_table entries by the vector of their verbatim content (HNSW, cosine): the
-- second dense key of a turn; a first-person question ("where does my sister live?")
-- can sit closer to the bare words than to "(8 May 2023) sam said: ...".
SELECT s.entry_id, s.session_id, s.role, s.content, s.created_at, s.external_id,
       s.token_count, s.distance, s.speaker,
       1 - least(s.universal_embedding <=> %(judge)s::vector,
                 s.index_embedding <=> %(judge)s::vector) AS similarity,
       1 - (s.universal_embedding <=> %(goal)s::vector) AS goal_similarity
FROM (SELECT entry_id, session_id, role, content, created_at, external_id, token_count,
             universal_embedding <=> %(query)s::vector AS distance, speaker,
             universal_embedding, index_embedding
      FROM day_table
      WHERE universal_embedding IS NOT NULL AND (%(user_id)s::uuid IS NULL OR user_id IS NULL
        OR user_id = %(user_id)s::uuid)
      ORDER BY universal_embedding <=> %(query)s::vector
      LIMIT %(k)s) s
ORDER BY s.distance;

-- name: recall_neighbours
-- The turns right before and after each seed turn in its session (day_table.turn_number;
-- issue 39 item 3: one hop along the conversation's own order), one user's (and no
-- user's): entry_id, session_id, role, content, created_at, external_id, token_count, the
-- seed's position in %(ids)s (1-based), speaker, similarity to the judged question, to the
-- goals, and whether it is the turn after its seed.
SELECT n.entry_id, n.session_id, n.role, n.content, n.created_at, n.external_id,
       n.token_count, s.ord AS seed, n.speaker,
       1 - least(n.universal_embedding <=> %(judge)s::vector,
                 n.index_embedding <=> %(judge)s::vector) AS similarity,
       1 - (n.universal_embedding <=> %(goal)s::vector) AS goal_similarity,
       n.turn_number > d.turn_number AS after
FROM unnest(%(ids)s::uuid[]) WITH ORDINALITY AS s(id, ord)
JOIN day_table d ON d.entry_id = s.id
JOIN day_table n ON n.session_id = d.session_id
 AND n.turn_number IN (d.turn_number - 1, d.turn_number + 1)
WHERE %(user_id)s::uuid IS NULL OR n.user_id IS NULL OR n.user_id = %(user_id)s::uuid
ORDER BY s.ord, n.turn_number;

-- name: recall_adjacent
-- The turns said right before and after each of recall's chosen turns in its session
-- ([recall] adjacent_turns, issue 39 item 2: a question and its answer come back together;
-- revision 0030's (session_id, turn_number) index), one user's (and no user's): the chosen
-- turn's position in %(ids)s (1-based), entry_id, role, content, created_at, external_id,
-- token_count, speaker, and whether it is the turn after. %(before)s false: after only.
SELECT s.ord, n.entry_id, n.role, n.content, n.created_at, n.external_id, n.token_count,
       n.speaker, n.turn_number > d.turn_number AS after
FROM unnest(%(ids)s::uuid[]) WITH ORDINALITY AS s(id, ord)
JOIN day_table d ON d.entry_id = s.id
JOIN day_table n ON n.session_id = d.session_id
 AND (n.turn_number = d.turn_number + 1
      OR (%(before)s AND n.turn_number = d.turn_number - 1))
WHERE %(user_id)s::uuid IS NULL OR n.user_id IS NULL OR n.user_id = %(user_id)s::uuid
ORDER BY s.ord, n.turn_number;

-- name: recall_own_words
-- The grounded reply's own pool (issue 40): one user's own words nearest the question
-- itself (not the compound query), by verbatim vector (HNSW, cosine; the role and user
-- filters are applied by pgvector's iterative scan, recall_hnsw_settings): the turns they
-- wrote, and the memories of turns they wrote (the turn's role, or the memory's own copy
-- once the night's cleanup deleted the turn: revision 0029). Only for a known user: never
-- another user's rows, and never rows of no user.
(SELECT 'day_table' AS kind, t.entry_id::text AS id, t.content, t.created_at, t.speaker,
        t.external_id, 1 - t.distance AS similarity
 FROM (SELECT entry_id, content, created_at, speaker, external_id,
              universal_embedding <=> %(query)s::vector AS distance
       FROM day_table
       WHERE universal_embedding IS NOT NULL AND role = 'user'
         AND user_id = %(user_id)s::uuid
       ORDER BY universal_embedding <=> %(query)s::vector
       LIMIT %(k)s) t)
UNION ALL
(SELECT 'memory', m.memory_id::text, m.content, m.created_at,
        coalesce(d.speaker, m.source_speaker), d.external_id, 1 - m.distance
 FROM (SELECT memory_id, content, created_at, source_entry_id, source_role, source_speaker,
              universal_embedding <=> %(query)s::vector AS distance
       FROM memories
       WHERE universal_embedding IS NOT NULL AND user_id = %(user_id)s::uuid
       ORDER BY universal_embedding <=> %(query)s::vector
       LIMIT %(k)s) m
 LEFT JOIN LATERAL (SELECT speaker, role, external_id FROM day_table
                    WHERE entry_id = m.source_entry_id LIMIT 1) d ON true
 WHERE coalesce(d.role, m.source_role) = 'user');

-- name: recall_dense_memories
-- Nearest memories (active, superseded and archived: consolidation lowers
-- importance, it never hides a memory).
-- The judged similarity is the distance already computed when the judged question is the
-- searched one (the planner folds the comparison of the two constants); the source turn is
-- looked up by key for the k rows (a join let the planner scan the whole day table).
SELECT m.memory_id, m.memory_type, m.content, m.created_at, m.importance, m.source_entry_id,
       m.status, m.distance, d.external_id, coalesce(d.speaker, m.source_speaker),
       coalesce(d.role, m.source_role),
       1 - CASE WHEN %(judge)s::vector = %(query)s::vector THEN m.distance
                ELSE m.universal_embedding <=> %(judge)s::vector END AS similarity,
       1 - (m.universal_embedding <=> %(goal)s::vector) AS goal_similarity
FROM (SELECT memory_id, memory_type, content, created_at, importance, source_entry_id, status,
             source_role, source_speaker,
             universal_embedding <=> %(query)s::vector AS distance, universal_embedding
      FROM memories
      WHERE universal_embedding IS NOT NULL AND (%(user_id)s::uuid IS NULL OR user_id IS NULL
  OR user_id = %(user_id)s::uuid)
      ORDER BY universal_embedding <=> %(query)s::vector
      LIMIT %(k)s) m
LEFT JOIN LATERAL (SELECT external_id, speaker, role FROM day_table
                   WHERE entry_id = m.source_entry_id LIMIT 1) d ON true
ORDER BY m.distance;

-- name: recall_dense_blocks
-- Nearest holographic blocks (formed by the night cycle), with the turns they were formed
-- from (entry ids, and the external ids of those still in day_table): a block is one more
-- key to its turns.
SELECT block_id, session_id, prose, arc_start_time, coherence_gain,
       universal_embedding <=> %(query)s::vector AS distance,
       ARRAY(SELECT jsonb_array_elements_text(flux_metrics -> 'entry_ids')) AS entry_ids,
       ARRAY(SELECT d.external_id FROM day_table d
             WHERE d.external_id IS NOT NULL AND d.entry_id::text IN (
                 SELECT jsonb_array_elements_text(flux_metrics -> 'entry_ids'))) AS external
FROM holographic_blocks
WHERE universal_embedding IS NOT NULL AND (%(user_id)s::uuid IS NULL OR user_id IS NULL
  OR user_id = %(user_id)s::uuid)
ORDER BY universal_embedding <=> %(query)s::vector
LIMIT %(k)s;

-- name: recall_bm25_day_table
-- Okapi BM25 over day_table's contextual index entries, read top-k first (revision 0012):
-- for each query term at most %(depth)s postings, best impact first, from
-- ix_lexical_postings_top (the asking user's, and those of no user; NULL user: everyone's),
-- so the cost grows with the depth, not with the term's document frequency. Each read
-- posting is scored with the configured k1, b, today's avgdl and the term's IDF
-- ln(1 + (N - df + 0.5) / (df + 0.5)) (df from lexical_terms, over every user; q computes
-- weight x IDF once per term, not for every posting read); a term
-- whose list was cut at the depth adds nothing to documents below the cut. %(weights)s
-- weighs each query term; %(since)s / %(until)s (NULL: no bound) keep documents dated in
-- that window (read from the index, so a narrow window reads deeper into the list).
WITH st AS (SELECT greatest(n_docs, 1)::float8 AS n,
              greatest(total_len::float8 / greatest(n_docs, 1), 1.0) AS avgdl
       FROM lexical_stats WHERE kind = 'day_table'),
q AS (SELECT t.term, max(t.w) * ln(1 + (st.n - max(lt.df) + 0.5) / (max(lt.df) + 0.5)) AS wi
      FROM unnest(%(terms)s::text[], %(weights)s::float8[]) AS t(term, w)
      JOIN lexical_terms lt ON lt.kind = 'day_table' AND lt.term = t.term AND lt.df > 0
      CROSS JOIN st
      GROUP BY t.term, st.n),
p AS (SELECT q.wi, x.doc_id, x.tf, x.doc_len
      FROM q CROSS JOIN LATERAL (
          (SELECT doc_id, tf, doc_len FROM lexical_postings
           WHERE kind = 'day_table' AND term = q.term AND %(user_id)s::uuid IS NOT NULL
             AND user_id = %(user_id)s::uuid
             AND (%(since)s::timestamptz IS NULL OR dated >= %(since)s::timestamptz)
             AND (%(until)s::timestamptz IS NULL OR dated < %(until)s::timestamptz)
           ORDER BY impact DESC LIMIT %(depth)s)
          UNION ALL
          (SELECT doc_id, tf, doc_len FROM lexical_postings
           WHERE kind = 'day_table' AND term = q.term AND user_id IS NULL
             AND (%(since)s::timestamptz IS NULL OR dated >= %(since)s::timestamptz)
             AND (%(until)s::timestamptz IS NULL OR dated < %(until)s::timestamptz)
           ORDER BY impact DESC LIMIT %(depth)s)
          UNION ALL
          (SELECT doc_id, tf, doc_len FROM lexical_postings
           WHERE kind = 'day_table' AND term = q.term AND %(user_id)s::uuid IS NULL
             AND user_id IS NOT NULL
             AND (%(since)s::timestamptz IS NULL OR dated >= %(since)s::timestamptz)
             AND (%(until)s::timestamptz IS NULL OR dated < %(until)s::timestamptz)
           ORDER BY impact DESC LIMIT %(depth)s)) x),
s AS (SELECT p.doc_id,
             sum(p.wi * p.tf * (%(k1)s::float8 + 1)
                 / (p.tf + %(k1)s::float8 * (1 - %(b)s::float8
                                             + %(b)s::float8 * p.doc_len / st.avgdl))) AS score
      FROM p, st
      GROUP BY p.doc_id ORDER BY score DESC LIMIT %(k)s)
SELECT d.entry_id, d.session_id, d.role, d.content, d.created_at, d.external_id,
       d.token_count, s.score, d.speaker,
       NULL::float8 AS similarity, NULL::float8 AS goal_similarity  -- similarity_by_ids
FROM s JOIN day_table d ON d.entry_id = s.doc_id
ORDER BY s.score DESC, d.created_at DESC;

-- name: recall_bm25_memories
-- Okapi BM25 over memories's contextual index entries, read top-k first (revision 0012):
-- for each query term at most %(depth)s postings, best impact first, from
-- ix_lexical_postings_top (the asking user's, and those of no user; NULL user: everyone's),
-- so the cost grows with the depth, not with the term's document frequency. Each read
-- posting is scored with the configured k1, b, today's avgdl and the term's IDF
-- ln(1 + (N - df + 0.5) / (df + 0.5)) (df from lexical_terms, over every user; q computes
-- weight x IDF once per term, not for every posting read); a term
-- whose list was cut at the depth adds nothing to documents below the cut. %(weights)s
-- weighs each query term; %(since)s / %(until)s (NULL: no bound) keep documents dated in
-- that window (read from the index, so a narrow window reads deeper into the list).
WITH st AS (SELECT greatest(n_docs, 1)::float8 AS n,
              greatest(total_len::float8 / greatest(n_docs, 1), 1.0) AS avgdl
       FROM lexical_stats WHERE kind = 'memory'),
q AS (SELECT t.term, max(t.w) * ln(1 + (st.n - max(lt.df) + 0.5) / (max(lt.df) + 0.5)) AS wi
      FROM unnest(%(terms)s::text[], %(weights)s::float8[]) AS t(term, w)
      JOIN lexical_terms lt ON lt.kind = 'memory' AND lt.term = t.term AND lt.df > 0
      CROSS JOIN st
      GROUP BY t.term, st.n),
p AS (SELECT q.wi, x.doc_id, x.tf, x.doc_len
      FROM q CROSS JOIN LATERAL (
          (SELECT doc_id, tf, doc_len FROM lexical_postings
           WHERE kind = 'memory' AND term = q.term AND %(user_id)s::uuid IS NOT NULL
             AND user_id = %(user_id)s::uuid
             AND (%(since)s::timestamptz IS NULL OR dated >= %(since)s::timestamptz)
             AND (%(until)s::timestamptz IS NULL OR dated < %(until)s::timestamptz)
           ORDER BY impact DESC LIMIT %(depth)s)
          UNION ALL
          (SELECT doc_id, tf, doc_len FROM lexical_postings
           WHERE kind = 'memory' AND term = q.term AND user_id IS NULL
             AND (%(since)s::timestamptz IS NULL OR dated >= %(since)s::timestamptz)
             AND (%(until)s::timestamptz IS NULL OR dated < %(until)s::timestamptz)
           ORDER BY impact DESC LIMIT %(depth)s)
          UNION ALL
          (SELECT doc_id, tf, doc_len FROM lexical_postings
           WHERE kind = 'memory' AND term = q.term AND %(user_id)s::uuid IS NULL
             AND user_id IS NOT NULL
             AND (%(since)s::timestamptz IS NULL OR dated >= %(since)s::timestamptz)
             AND (%(until)s::timestamptz IS NULL OR dated < %(until)s::timestamptz)
           ORDER BY impact DESC LIMIT %(depth)s)) x),
s AS (SELECT p.doc_id,
             sum(p.wi * p.tf * (%(k1)s::float8 + 1)
                 / (p.tf + %(k1)s::float8 * (1 - %(b)s::float8
                                             + %(b)s::float8 * p.doc_len / st.avgdl))) AS score
      FROM p, st
      GROUP BY p.doc_id ORDER BY score DESC LIMIT %(k)s)
SELECT m.memory_id, m.memory_type, m.content, m.created_at, m.importance,
       m.source_entry_id, m.status, s.score, d.external_id,
       coalesce(d.speaker, m.source_speaker), coalesce(d.role, m.source_role),
       NULL::float8 AS similarity, NULL::float8 AS goal_similarity  -- similarity_by_ids
FROM s JOIN memories m ON m.memory_id = s.doc_id
LEFT JOIN LATERAL (SELECT external_id, speaker, role FROM day_table
                   WHERE entry_id = m.source_entry_id LIMIT 1) d ON true
ORDER BY s.score DESC, m.created_at DESC;

-- name: recall_bm25_blocks
-- Okapi BM25 over holographic_blocks's contextual index entries, read top-k first (revision 0012):
-- for each query term at most %(depth)s postings, best impact first, from
-- ix_lexical_postings_top (the asking user's, and those of no user; NULL user: everyone's),
-- so the cost grows with the depth, not with the term's document frequency. Each read
-- posting is scored with the configured k1, b, today's avgdl and the term's IDF
-- ln(1 + (N - df + 0.5) / (df + 0.5)) (df from lexical_terms, over every user; q computes
-- weight x IDF once per term, not for every posting read); a term
-- whose list was cut at the depth adds nothing to documents below the cut. %(weights)s
-- weighs each query term; %(since)s / %(until)s (NULL: no bound) keep documents dated in
-- that window (read from the index, so a narrow window reads deeper into the list).
WITH st AS (SELECT greatest(n_docs, 1)::float8 AS n,
              greatest(total_len::float8 / greatest(n_docs, 1), 1.0) AS avgdl
       FROM lexical_stats WHERE kind = 'block'),
q AS (SELECT t.term, max(t.w) * ln(1 + (st.n - max(lt.df) + 0.5) / (max(lt.df) + 0.5)) AS wi
      FROM unnest(%(terms)s::text[], %(weights)s::float8[]) AS t(term, w)
      JOIN lexical_terms lt ON lt.kind = 'block' AND lt.term = t.term AND lt.df > 0
      CROSS JOIN st
      GROUP BY t.term, st.n),
p AS (SELECT q.wi, x.doc_id, x.tf, x.doc_len
      FROM q CROSS JOIN LATERAL (
          (SELECT doc_id, tf, doc_len FROM lexical_postings
           WHERE kind = 'block' AND term = q.term AND %(user_id)s::uuid IS NOT NULL
             AND user_id = %(user_id)s::uuid
             AND (%(since)s::timestamptz IS NULL OR dated >= %(since)s::timestamptz)
             AND (%(until)s::timestamptz IS NULL OR dated < %(until)s::timestamptz)
           ORDER BY impact DESC LIMIT %(depth)s)
          UNION ALL
          (SELECT doc_id, tf, doc_len FROM lexical_postings
           WHERE kind = 'block' AND term = q.term AND user_id IS NULL
             AND (%(since)s::timestamptz IS NULL OR dated >= %(since)s::timestamptz)
             AND (%(until)s::timestamptz IS NULL OR dated < %(until)s::timestamptz)
           ORDER BY impact DESC LIMIT %(depth)s)
          UNION ALL
          (SELECT doc_id, tf, doc_len FROM lexical_postings
           WHERE kind = 'block' AND term = q.term AND %(user_id)s::uuid IS NULL
             AND user_id IS NOT NULL
             AND (%(since)s::timestamptz IS NULL OR dated >= %(since)s::timestamptz)
             AND (%(until)s::timestamptz IS NULL OR dated < %(until)s::timestamptz)
           ORDER BY impact DESC LIMIT %(depth)s)) x),
s AS (SELECT p.doc_id,
             sum(p.wi * p.tf * (%(k1)s::float8 + 1)
                 / (p.tf + %(k1)s::float8 * (1 - %(b)s::float8
                                             + %(b)s::float8 * p.doc_len / st.avgdl))) AS score
      FROM p, st
      GROUP BY p.doc_id ORDER BY score DESC LIMIT %(k)s)
SELECT b.block_id, b.session_id, b.prose, b.arc_start_time, b.coherence_gain, s.score,
       ARRAY(SELECT jsonb_array_elements_text(b.flux_metrics -> 'entry_ids')) AS entry_ids,
       ARRAY(SELECT d.external_id FROM day_table d
             WHERE d.external_id IS NOT NULL AND d.entry_id::text IN (
                 SELECT jsonb_array_elements_text(b.flux_metrics -> 'entry_ids'))) AS external
FROM s JOIN holographic_blocks b ON b.block_id = s.doc_id
ORDER BY s.score DESC, b.arc_start_time DESC;

-- name: recall_dense_day_table_window
-- Nearest day_table entries dated inside a window the query names ("in May", "last
-- week"): exact (the "+ 0" keeps the planner off the HNSW order and on the date index),
-- since a window is a small share of the table.
SELECT s.entry_id, s.session_id, s.role, s.content, s.created_at, s.external_id,
       s.token_count, s.distance, s.speaker,
       1 - least(s.universal_embedding <=> %(judge)s::vector,
                 s.index_embedding <=> %(judge)s::vector) AS similarity,
       1 - (s.universal_embedding <=> %(goal)s::vector) AS goal_similarity
FROM (SELECT entry_id, session_id, role, content, created_at, external_id, token_count,
             index_embedding <=> %(query)s::vector AS distance, speaker,
             universal_embedding, index_embedding
      FROM day_table
      WHERE index_embedding IS NOT NULL
        AND created_at >= %(since)s::timestamptz AND created_at < %(until)s::timestamptz
        AND (%(user_id)s::uuid IS NULL OR user_id IS NULL OR user_id = %(user_id)s::uuid)
      ORDER BY (index_embedding <=> %(query)s::vector) + 0
      LIMIT %(k)s) s
ORDER BY s.distance;

-- name: known_speakers
-- Which of the query's words name a speaker of this user's turns (people-aware recall).
SELECT DISTINCT speaker FROM day_table
WHERE speaker = ANY(%(names)s)
  AND (%(user_id)s::uuid IS NULL OR user_id IS NULL OR user_id = %(user_id)s::uuid);

-- name: similarity_by_ids
-- The rows the BM25 lists found (%(turn_ids)s, %(memory_ids)s): their cosine similarity
-- to the judged question and to the active goals' centroid (%(goal)s; NULL: no goals), as
-- the dense lists return them for their own rows; keyed as recall's candidate pool keys
-- them ('day_table' | 'memory', id). A turn's is the closer of its verbatim content ("where
-- does my sister live?") and the turn in context (for questions that name people and
-- times). One statement for both tables: one fewer in recall's pipeline.
SELECT 'day_table' AS kind, entry_id AS id,
       1 - least(universal_embedding <=> %(judge)s::vector,
                 index_embedding <=> %(judge)s::vector) AS similarity,
       1 - (universal_embedding <=> %(goal)s::vector) AS goal_similarity
FROM day_table WHERE entry_id = ANY(%(turn_ids)s::uuid[])
  AND coalesce(index_embedding, universal_embedding) IS NOT NULL
UNION ALL
SELECT 'memory', memory_id, 1 - (universal_embedding <=> %(judge)s::vector),
       1 - (universal_embedding <=> %(goal)s::vector)
FROM memories WHERE memory_id = ANY(%(memory_ids)s::uuid[])
  AND universal_embedding IS NOT NULL;

-- name: term_doc_freq
-- Document frequency of each query term in day_table's lexicon, and the number of
-- indexed turns: the IDF weights of the verdict's term coverage.
SELECT t, coalesce((SELECT df FROM lexical_terms WHERE kind = 'day_table' AND term = t), 0),
       (SELECT n_docs FROM lexical_stats WHERE kind = 'day_table')
FROM unnest(%(terms)s::text[]) AS t;

-- name: recall_memories_estimate
-- memories' size as the planner knows it (every user's rows; autovacuum's ANALYZE keeps it
-- current; -1 before the first): what recall's hnsw.ef_search band is chosen by.
SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = 'memories'::regclass;

-- name: recall_hnsw_settings
-- pgvector >= 0.8: keep scanning the HNSW index until enough rows pass the user filter
-- (relaxed order: the caller re-sorts), and the configured search breadth.
SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false),
       set_config('hnsw.ef_search', %(ef_search)s::text, false);

-- name: recall_log_insert
INSERT INTO recall_log (session_id, entry_id, query, verdict, items, latency_ms)
VALUES (%s, %s, %s, %s, %s::jsonb, %s) RETURNING id;

-- name: recall_session_user
SELECT user_id FROM sessions WHERE session_id = %s;

-- name: recall_warm_settings
-- the warm-up's searches go through memories' HNSW index at recall's search breadth, never
-- a scan of the table (which would fill shared_buffers with heap pages instead); for the
-- warm-up's transaction only
SELECT set_config('enable_seqscan', 'off', true),
       set_config('hnsw.ef_search', %(ef_search)s::text, true);

-- name: recall_warm
-- memories' HNSW graph read into shared_buffers (agent/services/memory/recall.py warm): from each of up to
-- %(n)s stored vectors, drawn from a few random heap pages (SYSTEM sampling reads only
-- those), one search as recall's memories' list runs it (no user filter: the same graph).
-- Returns how many searches ran.
SELECT count(*) FROM (
    SELECT universal_embedding AS v FROM memories TABLESAMPLE SYSTEM (%(percent)s)
    WHERE universal_embedding IS NOT NULL LIMIT %(n)s
) AS s
CROSS JOIN LATERAL (
    SELECT 1 FROM memories m ORDER BY m.universal_embedding <=> s.v LIMIT 1
) AS hit;
