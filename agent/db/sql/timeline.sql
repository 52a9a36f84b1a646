-- Episodes, milestones and the timeline (issue 42 item 4; seed 000 §4.3, §4.6.3):
-- night_cycle/stages/episodes.py writes them, agent/services/memory/timeline.py reads.

-- name: timeline_unassigned_blocks
-- the blocks no episode holds yet (metablocks aside: their constituents are blocks),
-- oldest first, bounded per run
SELECT b.block_id::text, b.session_id::text, b.user_id::text, b.arc_start_time,
       b.arc_end_time, b.universal_embedding::text,
       coalesce(b.flux_metrics->'entry_ids', '[]'::jsonb), b.prose
FROM holographic_blocks b
WHERE NOT EXISTS (SELECT 1 FROM episode_blocks e WHERE e.block_id = b.block_id)
  AND b.flux_metrics->>'kind' IS DISTINCT FROM 'metablock'
  AND b.arc_start_time < %(cutoff)s
ORDER BY b.arc_start_time, b.block_id
LIMIT %(limit)s;

-- name: timeline_turn_importance
-- the importance of the memories made from some turns (an event milestone's weight)
SELECT source_entry_id::text, max(importance) FROM memories
WHERE source_entry_id = ANY(%(ids)s::uuid[]) GROUP BY source_entry_id;

-- name: timeline_insert_episode
INSERT INTO episodes (episode_id, user_id, session_ids, started_at, ended_at, title,
                      titled_by, terms, source_entry_ids, detector, run_id)
VALUES (%(episode_id)s, %(user_id)s, %(session_ids)s::uuid[], %(start)s, %(end)s, %(title)s,
        %(titled_by)s, %(terms)s::text[], %(entries)s::uuid[], %(detector)s, %(run_id)s)
ON CONFLICT (episode_id) DO NOTHING;

-- name: timeline_insert_episode_block
INSERT INTO episode_blocks (block_id, episode_id) VALUES (%s, %s) ON CONFLICT DO NOTHING;

-- name: timeline_insert_milestone
-- a milestone's turn may be gone (cleanup, forget): then it names no turn
INSERT INTO milestones (episode_id, user_id, kind, key, content, at, importance,
                        source_entry_id, detector)
VALUES (%(episode_id)s, %(user_id)s, %(kind)s, %(key)s, %(content)s, %(at)s, %(importance)s,
        (SELECT entry_id FROM day_table WHERE entry_id = %(entry_id)s::uuid), %(detector)s)
ON CONFLICT (user_id, kind, key) DO NOTHING;

-- name: timeline_episodes
-- one user's episodes overlapping [from, to) (either bound may be NULL): the newest
-- `limit` of them, printed oldest first (a cut drops the oldest)
SELECT * FROM (
  SELECT e.episode_id, e.started_at, e.ended_at, e.title, e.titled_by, e.terms,
         e.session_ids, e.source_entry_ids, e.detector,
         array(SELECT b.block_id::text FROM episode_blocks b
               WHERE b.episode_id = e.episode_id ORDER BY b.block_id)
  FROM episodes e
  WHERE e.user_id IS NOT DISTINCT FROM %(user_id)s::uuid
    AND (%(from)s::timestamptz IS NULL OR e.ended_at >= %(from)s::timestamptz)
    AND (%(to)s::timestamptz IS NULL OR e.started_at < %(to)s::timestamptz)
  ORDER BY e.started_at DESC, e.episode_id DESC
  LIMIT %(limit)s
) newest
ORDER BY started_at, episode_id;

-- name: timeline_milestones
SELECT m.milestone_id, m.episode_id, m.kind, m.content, m.at, m.importance,
       m.source_entry_id, m.detector
FROM milestones m WHERE m.episode_id = ANY(%(ids)s::uuid[])
ORDER BY m.at, m.milestone_id;

-- name: timeline_forget_episodes_of_turns
-- the episodes made from forgotten turns or from blocks the forgotten text was cut out of
-- (agent/services/memory/forget.py)
SELECT episode_id, title, terms, titled_by FROM episodes
WHERE source_entry_ids && %(turns)s::uuid[]
   OR episode_id IN (SELECT episode_id FROM episode_blocks
                     WHERE block_id = ANY(%(blocks)s::uuid[]));

-- name: timeline_forget_episode_update
-- an episode's title and terms without the forgotten text's words, its sources without
-- the forgotten turns
UPDATE episodes SET title = %(title)s, terms = %(terms)s::text[],
  source_entry_ids = array(SELECT x FROM unnest(source_entry_ids) x
                           WHERE x <> ALL(%(turns)s::uuid[]))
WHERE episode_id = %(id)s;
