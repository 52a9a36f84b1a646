-- The night cycle (night_cycle/): its runs, stages and morning brief.

-- name: night_storage_block_stored
UPDATE holographic_blocks SET parent_metablock_id = %s WHERE block_id = ANY(%s::uuid[]);

-- name: night_storage_cited_blocks
SELECT entry_id::text, cited_id::text FROM memory_citations WHERE entry_id = ANY(%s::uuid[]);

-- name: night_storage_block_chain
UPDATE holographic_blocks SET continues_from = %s, continued_by = %s WHERE block_id = %s;

-- name: night_storage_stored_blocks
SELECT block_id::text FROM holographic_blocks WHERE block_id = ANY(%s::uuid[]);

-- name: night_storage_insert_blocks
-- stage 6's blocks and metablocks, one statement per batch of rows (a JSON array of
-- objects with the keys below; vectors as pgvector text): the BM25 lexicon's statement
-- trigger then updates lexical_stats and each term's df once per batch. One per block
-- updated those rows once per block in one transaction, and each update had to walk
-- past every version the transaction had left of the row before it (stage 6 ran for
-- more than 11 minutes on 10,565 blocks, 100k imported turns; 20 s on ~1,000)
INSERT INTO holographic_blocks (
    block_id, prose, native_embedding, native_model, universal_embedding, flux_metrics,
    salience_scores, coherence_gain, ties_merge_weight, session_id, user_id, user_tier, run_id,
    arc_start_time, arc_end_time, vector_history, session_continuity_flag, citations,
    preoccupation_centroid_id, index_text, index_tsv, index_version)
SELECT r.block_id, r.prose, r.native::halfvec, r.native_model, r.universal::vector, r.flux,
       r.salience, r.coherence_gain, r.ties, r.session_id, r.user_id, r.tier, r.run_id,
       r.start, r."end", r.history, r.flag, r.citations, r.centroid, r.index_text,
       r.index_tsv::tsvector, r.index_version
FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(
    block_id uuid, prose jsonb, native text, native_model text, universal text, flux jsonb,
    salience jsonb, coherence_gain float8, ties float8, session_id uuid, user_id uuid,
    tier text, run_id bigint, start timestamptz, "end" timestamptz, history jsonb,
    flag boolean, citations jsonb, centroid uuid, index_text text, index_tsv text,
    index_version smallint)
ON CONFLICT (block_id) DO NOTHING;

-- name: night_storage_insert_edge
INSERT INTO block_relationships (relationship_id, source_block_id, target_block_id,
                                 relationship_type, strength)
VALUES (%s, %s, %s, %s, %s) ON CONFLICT (relationship_id) DO NOTHING;

-- name: night_cleanup_delete
WITH covered AS (
    SELECT DISTINCT (jsonb_array_elements_text(b.flux_metrics->'entry_ids'))::uuid AS entry_id
    FROM holographic_blocks b
    WHERE b.session_id IN (SELECT DISTINCT session_id FROM day_table)
),
doomed AS (
    SELECT d.entry_id, coalesce(u.tier, d.user_tier, %(default)s) AS tier
    FROM day_table d
    JOIN covered c ON c.entry_id = d.entry_id
    LEFT JOIN users u ON u.user_id = d.user_id
    WHERE d.created_at < %(now)s - make_interval(days => %(cycle_days)s * (
        CASE coalesce(u.tier, d.user_tier, %(default)s)
            WHEN 'elder' THEN %(elder)s WHEN 'meso' THEN %(meso)s ELSE %(normal)s END))
)
DELETE FROM day_table d USING doomed
WHERE d.entry_id = doomed.entry_id
RETURNING doomed.tier;

-- name: night_cleanup_kept
SELECT count(*) FILTER (WHERE c.entry_id IS NOT NULL), count(*) FILTER (WHERE c.entry_id IS NULL)
FROM day_table d
LEFT JOIN (SELECT DISTINCT (jsonb_array_elements_text(flux_metrics->'entry_ids'))::uuid
           AS entry_id FROM holographic_blocks) c ON c.entry_id = d.entry_id;

-- name: night_centroids_active
SELECT centroid_id::text, label, centroid::text, weight, member_count FROM preoccupation_centroids
WHERE status = 'active' ORDER BY created_at, centroid_id;

-- name: night_centroids_any
SELECT EXISTS (SELECT 1 FROM preoccupation_centroids);

-- name: night_centroids_insert
INSERT INTO preoccupation_centroids (centroid_id, label, centroid, kind, weight, member_count,
                                     parent_ids)
VALUES (%s, %s, %s::vector, %s, %s, %s, %s::jsonb)
ON CONFLICT (centroid_id) DO NOTHING;

-- name: night_migration_mark_migrated
UPDATE holographic_blocks SET migrated_at = %s WHERE block_id = ANY(%s::uuid[]);

-- name: night_migration_pending
SELECT b.block_id::text, b.prose, b.universal_embedding::text, b.native_embedding::text,
       b.native_model, b.flux_metrics, b.salience_scores, b.coherence_gain, b.ties_merge_weight,
       b.citations, b.preoccupation_centroid_id::text, b.parent_metablock_id::text,
       b.continues_from::text, b.continued_by::text, b.session_continuity_flag,
       b.arc_start_time, b.arc_end_time, b.created_at, b.last_accessed, b.vector_history,
       b.session_id::text, b.user_id::text, coalesce(u.tier, b.user_tier, %s), b.run_id
FROM holographic_blocks b LEFT JOIN users u ON u.user_id = b.user_id
WHERE b.migrated_at IS NULL
ORDER BY b.arc_start_time, b.block_id;

-- name: night_clustering_blocks
SELECT block_id::text, flux_metrics->'entry_ids', session_id::text, arc_start_time, prose
FROM holographic_blocks WHERE run_id = %s AND (salience_scores->>'antechamber')::boolean
ORDER BY block_id;

-- name: night_clustering_retire_parents
UPDATE preoccupation_centroids SET status = 'retired', retired_at = %s
WHERE centroid_id = ANY(%s::uuid[]);

-- name: night_brief_top_blocks
SELECT block_id::text, ties_merge_weight, coherence_gain, arc_start_time, prose,
       flux_metrics->>'kind', flux_metrics->>'signal'
FROM holographic_blocks WHERE run_id = %s AND flux_metrics->>'kind' <> 'metablock'
ORDER BY ties_merge_weight DESC, block_id LIMIT 5;

-- name: night_brief_centroids
SELECT kind, status, label FROM preoccupation_centroids
WHERE created_at >= %s OR retired_at >= %s ORDER BY created_at;

-- name: night_brief_users
-- the users a run wrote something of (blocks, overnight thoughts): each gets a brief
SELECT b.user_id, u.handle FROM (
    SELECT user_id FROM holographic_blocks WHERE run_id = %(run)s AND user_id IS NOT NULL
    UNION
    SELECT user_id FROM thoughts WHERE theme = %(theme)s AND user_id IS NOT NULL
      AND kind IN ('overnight', 'creative_drift')) b
JOIN users u ON u.user_id = b.user_id ORDER BY u.handle;

-- name: night_brief_user_counts
-- one user's share of a run: blocks formed, and the turns they cover
SELECT count(*), coalesce(sum(jsonb_array_length(coalesce(flux_metrics->'entry_ids',
                                                          '[]'::jsonb))), 0)
FROM holographic_blocks
WHERE run_id = %(run)s AND user_id = %(user)s AND flux_metrics->>'kind' <> 'metablock';

-- name: night_brief_top_blocks_of_user
-- night_brief_top_blocks, of one user only (their own brief)
SELECT block_id::text, ties_merge_weight, coherence_gain, arc_start_time, prose,
       flux_metrics->>'kind', flux_metrics->>'signal'
FROM holographic_blocks
WHERE run_id = %(run)s AND user_id = %(user)s AND flux_metrics->>'kind' <> 'metablock'
ORDER BY ties_merge_weight DESC, block_id LIMIT 5;

-- name: night_brief_thoughts_of_user
-- overnight_thoughts_of_run, of one user only (their own brief)
SELECT kind, content, confidence, thought_id::text FROM thoughts
WHERE theme = %(theme)s AND user_id = %(user)s AND kind IN ('overnight', 'creative_drift')
ORDER BY kind DESC, confidence DESC NULLS LAST, created_at LIMIT 20;

-- name: night_brief_insert
-- a user's brief of a run, written once (a resumed run keeps the one it wrote)
INSERT INTO night_briefs (run_id, user_id, content) VALUES (%(run)s, %(user)s, %(content)s)
ON CONFLICT (run_id, user_id) DO NOTHING;


-- name: night_context_candidates
-- rows of this run: before the cutoff, and not yet in any holographic block
WITH sess AS (SELECT DISTINCT session_id FROM day_table WHERE created_at < %(cutoff)s),
covered AS (
    SELECT (jsonb_array_elements_text(b.flux_metrics->'entry_ids'))::uuid AS entry_id
    FROM holographic_blocks b WHERE b.session_id IN (SELECT session_id FROM sess))
SELECT d.entry_id::text, d.session_id::text, d.user_id::text,
       coalesce(u.tier, d.user_tier, %(default_tier)s), d.role, d.content,
       d.universal_embedding::text, d.perplexity_score, d.created_at, d.turn_number,
       d.message_type
FROM day_table d LEFT JOIN users u ON u.user_id = d.user_id
WHERE d.created_at < %(cutoff)s
  AND NOT EXISTS (SELECT 1 FROM covered c WHERE c.entry_id = d.entry_id)
ORDER BY d.session_id, d.created_at, d.turn_number, d.entry_id;

-- name: night_context_turns_by_ids
SELECT d.entry_id::text, d.session_id::text, d.user_id::text,
       coalesce(u.tier, d.user_tier, %(default_tier)s), d.role, d.content,
       d.universal_embedding::text, d.perplexity_score, d.created_at, d.turn_number,
       d.message_type
FROM day_table d LEFT JOIN users u ON u.user_id = d.user_id
WHERE d.entry_id = ANY(%(ids)s::uuid[]);

-- name: night_runs_start
INSERT INTO night_cycle_runs (checkpoints) VALUES (%s::jsonb)
RETURNING run_id, started_at, status, stage, checkpoints;

-- name: night_runs_unfinished
SELECT run_id, started_at, status, stage, checkpoints FROM night_cycle_runs
WHERE status <> 'done' ORDER BY run_id DESC;

-- name: night_runs_last
SELECT run_id, started_at, status, stage, checkpoints FROM night_cycle_runs
ORDER BY run_id DESC LIMIT 1;

-- name: night_runs_checkpoints
UPDATE night_cycle_runs SET checkpoints = %s::jsonb, stage = %s, status = 'running',
       error = NULL
WHERE run_id = %s;

-- name: night_runs_finish
UPDATE night_cycle_runs SET status = 'done', finished_at = now(), summary = %s::jsonb,
       error = NULL
WHERE run_id = %s;

-- name: night_runs_fail
UPDATE night_cycle_runs SET status = 'failed', error = %s WHERE run_id = %s;

-- name: night_flux_update
-- stage 1's flags per turn, in day_flux (revision 0028: not in day_table, whose wide rows
-- an update would rewrite with their HNSW index entries); a re-run overwrites them
INSERT INTO day_flux (entry_id, surprise, flux_state)
SELECT * FROM unnest(%s::uuid[], %s::float8[], %s::text[])
ON CONFLICT (entry_id) DO UPDATE
SET surprise = EXCLUDED.surprise, flux_state = EXCLUDED.flux_state, written_at = now();
