-- The web console's Overnight, Mind and Health pages (agent/services/access/console_views.py).
-- Per-user rows are filtered by user_id here; Health's figures are installation-wide counts
-- and timings, never text.

-- name: console_view_night_runs
-- the newest night-cycle runs with their stage checkpoints (numbers and timings only are shown)
SELECT run_id, started_at, finished_at, status, stage, checkpoints->'stages'
FROM night_cycle_runs ORDER BY run_id DESC LIMIT %(limit)s;

-- name: console_view_blocks_of_user
-- of these blocks, those the user may see (theirs, or of no user), with their prose
SELECT block_id::text, user_id IS NULL, prose, arc_start_time, arc_end_time
FROM holographic_blocks
WHERE block_id = ANY(%(ids)s::uuid[]) AND (user_id = %(user_id)s OR user_id IS NULL);

-- name: console_view_identity_history
-- every identity trait (Layer 0: the assistant's, shared by every user) and its weight changes
SELECT i.name, i.weight, i.is_boundary, i.created_at, h.old_weight, h.new_weight, h.changed_at
FROM identity i LEFT JOIN identity_history h ON h.trait_id = i.trait_id
ORDER BY i.name, h.changed_at NULLS FIRST, h.id;

-- name: console_view_goal_history
-- the active goals a user's prompt carries (installation-wide ones and the user's own) and
-- their weight changes
SELECT g.name, g.weight, g.user_id IS NULL, g.created_at, h.old_weight, h.new_weight,
       h.changed_at
FROM goals g LEFT JOIN goals_history h ON h.goal_id = g.goal_id
WHERE g.status = 'active' AND (g.user_id IS NULL OR g.user_id = %(user_id)s)
ORDER BY g.name, h.changed_at NULLS FIRST, h.id;

-- name: console_view_emotion_series
-- the user's newest emotional states (ix_emotional_state_user), oldest first
SELECT created_at, valence, energy, openness, label FROM (
    SELECT created_at, valence, energy, openness, label, id FROM emotional_state
    WHERE user_id = %(user_id)s ORDER BY created_at DESC, id DESC LIMIT %(limit)s) s
ORDER BY created_at, id;

-- name: console_view_queues
-- what waits: messages, replies, the exit gate's buffer, vectors to embed, open problems
SELECT (SELECT count(*) FROM inbox WHERE status = 'pending'),
       (SELECT count(*) FROM inbox WHERE status = 'processing'),
       (SELECT count(*) FROM inbox WHERE status = 'failed'),
       (SELECT count(*) FROM outbox WHERE delivered_at IS NULL),
       (SELECT count(*) FROM scratch_buffer WHERE status = 'pending'),
       (SELECT count(*) FROM day_table
        WHERE index_embedding IS NULL AND index_text IS NOT NULL),
       (SELECT count(*) FROM problem_queue WHERE status = 'open');

-- name: console_view_recall_latency
-- recall latency per hour (UTC) over the last days given, of the newest recalls (at most
-- max_rows, read backwards on ix_recall_log_created): p50, p95 and how many recalls
SELECT date_bin('1 hour', created_at, timestamptz '2000-01-01 00:00+00') AS hour,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms),
       percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms), count(*)
FROM (SELECT created_at, latency_ms FROM recall_log
      WHERE created_at >= now() - make_interval(days => %(days)s) AND latency_ms IS NOT NULL
      ORDER BY created_at DESC LIMIT %(max_rows)s) newest
GROUP BY 1 ORDER BY 1;
