-- Session handoff, continuation notes, corrections in the prompt and the intentions'
-- lifecycle (agent/services/reach/handoff.py, corrections.py, intentions.py).

-- name: handoff_turn_at
SELECT created_at FROM day_table WHERE entry_id = %s;

-- name: handoff_previous_turns
-- before a user turn at %(at)s: the user's previous user turn anywhere (its session and
-- time) and the previous user turn of this session (its time; NULL: the session's first).
-- `user_id = ` (every session has a user), not IS NOT DISTINCT FROM, which no index serves:
-- a new user's first turn read the whole day table (44 ms at 200k rows, 0.1 ms with =)
SELECT (SELECT d.session_id FROM day_table d
        WHERE d.user_id = %(user)s AND d.role = 'user'
          AND d.message_type = 'dialogue' AND d.created_at < %(at)s
          AND d.entry_id IS DISTINCT FROM %(entry)s
        ORDER BY d.created_at DESC LIMIT 1),
       (SELECT max(d.created_at) FROM day_table d
        WHERE d.user_id = %(user)s AND d.role = 'user'
          AND d.message_type = 'dialogue' AND d.created_at < %(at)s
          AND d.entry_id IS DISTINCT FROM %(entry)s),
       (SELECT max(d.created_at) FROM day_table d
        WHERE d.session_id = %(session)s AND d.role = 'user' AND d.message_type = 'dialogue'
          AND d.created_at < %(at)s AND d.entry_id IS DISTINCT FROM %(entry)s);

-- name: handoff_session_first_user_turn
SELECT entry_id, created_at, content FROM day_table
WHERE session_id = %s AND role = 'user' AND message_type = 'dialogue'
ORDER BY created_at, turn_number LIMIT 1;

-- name: handoff_note
SELECT note_id, content, source_ids, detector, last_turn_at FROM continuation_notes
WHERE session_id = %s;

-- name: handoff_session_turns
-- a session's last dialogue turns before %(before)s, newest first
SELECT entry_id, role, content, created_at, user_id FROM day_table
WHERE session_id = %(session)s AND message_type = 'dialogue' AND created_at < %(before)s
ORDER BY created_at DESC, turn_number DESC LIMIT %(k)s;

-- name: handoff_session_open_intentions
SELECT intention_id, kind, content FROM intentions
WHERE session_id = %s AND status = 'open' ORDER BY created_at;

-- name: handoff_note_upsert
INSERT INTO continuation_notes (session_id, user_id, content, source_ids, detector, last_turn_at)
VALUES (%(session)s, %(user)s, %(content)s, %(source_ids)s::jsonb, %(detector)s, %(last_turn_at)s)
ON CONFLICT (session_id) DO UPDATE SET content = EXCLUDED.content,
    source_ids = EXCLUDED.source_ids, detector = EXCLUDED.detector,
    last_turn_at = EXCLUDED.last_turn_at, user_id = EXCLUDED.user_id, updated_at = now()
RETURNING note_id;

-- name: handoff_quiet_sessions
-- sessions with a dialogue turn in (%(since)s, %(quiet_before)s), quiet since
-- %(quiet_before)s, whose note is missing or older than their last turn; `since` is the
-- previous pass's watermark, so a pass reads only the turns written since (created_at index)
WITH touched AS (
    SELECT DISTINCT session_id FROM day_table
    WHERE message_type = 'dialogue' AND created_at > %(since)s
      AND created_at < %(quiet_before)s)
SELECT s.session_id, t.last_at FROM touched
CROSS JOIN LATERAL (
    SELECT max(d.created_at) AS last_at FROM day_table d
    WHERE d.session_id = touched.session_id AND d.message_type = 'dialogue') t
JOIN sessions s ON s.session_id = touched.session_id
LEFT JOIN continuation_notes n ON n.session_id = touched.session_id
WHERE t.last_at < %(quiet_before)s
  AND (n.note_id IS NULL OR n.last_turn_at IS NULL OR n.last_turn_at < t.last_at)
ORDER BY t.last_at LIMIT %(k)s;

-- name: handoff_open_intentions
-- a user's open intentions for the handoff: overdue first, then the most urgent
SELECT intention_id, kind, content, carried_count, source_entry_id FROM intentions
WHERE user_id IS NOT DISTINCT FROM %(user)s AND status = 'open'
ORDER BY carried_count >= %(overdue)s DESC, urgency DESC, created_at DESC LIMIT %(k)s;

-- name: handoff_latest_brief
-- the latest finished night cycle run that formed blocks of this user, when it finished
-- after %(after)s (the user's own brief: their blocks, handoff_brief_blocks)
SELECT r.run_id, r.finished_at FROM night_cycle_runs r
WHERE r.status = 'done' AND r.finished_at > %(after)s
  AND EXISTS (SELECT 1 FROM holographic_blocks b WHERE b.run_id = r.run_id
              AND b.user_id = %(user)s
              AND coalesce(b.flux_metrics ->> 'kind', '') <> 'metablock')
ORDER BY r.finished_at DESC, r.run_id DESC LIMIT 1;

-- name: handoff_brief_blocks
-- the run's strongest blocks of one user, as the brief ranks them (night_brief_top_blocks)
SELECT block_id::text, ties_merge_weight, prose, flux_metrics -> 'entry_ids' FROM holographic_blocks
WHERE run_id = %(run)s AND user_id = %(user)s
  AND coalesce(flux_metrics ->> 'kind', '') <> 'metablock'
ORDER BY ties_merge_weight DESC, block_id LIMIT %(k)s;

-- name: corrections_matching
-- active corrections of a user (or of no user) with their cosine to the query vector
SELECT memory_id, content, fails_when, fine_when,
       1 - (universal_embedding <=> %(q)s::vector) AS similarity
FROM memories
WHERE memory_type = 'correction' AND status = 'active' AND universal_embedding IS NOT NULL
  AND (user_id IS NULL OR user_id = %(user)s)
ORDER BY similarity DESC LIMIT 50;

-- name: intentions_fulfil_candidates
-- a user's open intentions found before this turn, with their cosine to the turn's vector
SELECT i.intention_id, i.kind, i.content, 1 - (i.universal_embedding <=> d.universal_embedding)
FROM intentions i, day_table d
WHERE d.entry_id = %(entry)s AND i.user_id IS NOT DISTINCT FROM %(user)s AND i.status = 'open'
  AND i.universal_embedding IS NOT NULL AND d.universal_embedding IS NOT NULL
  AND i.source_entry_id IS DISTINCT FROM d.entry_id AND i.created_at < d.created_at
ORDER BY i.universal_embedding <=> d.universal_embedding LIMIT 20;

-- name: intentions_fulfil
UPDATE intentions SET status = 'fulfilled', resolved_at = now(), resolved_by_entry_id = %(entry)s,
       resolution = %(resolution)s::jsonb, updated_at = now()
WHERE intention_id = %(id)s AND status = 'open' RETURNING intention_id;

-- name: intentions_surfaceable
-- a user's open intentions close to the query vector, not surfaced since %(cooled)s
SELECT intention_id, kind, content, carried_count, source_entry_id,
       1 - (universal_embedding <=> %(q)s::vector) AS similarity
FROM intentions
WHERE user_id IS NOT DISTINCT FROM %(user)s AND status = 'open'
  AND universal_embedding IS NOT NULL
  AND (last_surfaced_at IS NULL OR last_surfaced_at < %(cooled)s)
  AND 1 - (universal_embedding <=> %(q)s::vector) >= %(min_sim)s
ORDER BY universal_embedding <=> %(q)s::vector LIMIT %(k)s;

-- name: intentions_mark_surfaced
UPDATE intentions SET last_surfaced_at = now() WHERE intention_id = ANY(%s::uuid[]);

-- name: intentions_of_user
-- a user's intentions, open first (then the newest resolved)
SELECT intention_id, kind, status, content, carried_count, carried_count >= %(overdue)s,
       urgency, created_at, resolved_at, resolution, resolved_by_entry_id, source_entry_id
FROM intentions WHERE user_id = %(user)s AND (%(all)s OR status = 'open')
ORDER BY status <> 'open', coalesce(resolved_at, created_at) DESC LIMIT %(k)s;

-- name: intentions_row
SELECT intention_id, user_id, status FROM intentions WHERE intention_id = %s;

-- name: intentions_drop
UPDATE intentions SET status = 'dropped', resolved_at = now(), resolution = %(resolution)s::jsonb,
       updated_at = now()
WHERE intention_id = %(id)s AND status = 'open' RETURNING intention_id;

-- name: handoff_overnight_thoughts
-- the user's overnight and creative-drift thoughts (night cycle stage 10) not shown yet,
-- written since the user's previous turn; the most confident first
SELECT thought_id, kind, content, confidence, source_ids FROM thoughts
WHERE user_id = %(user)s AND kind IN ('overnight', 'creative_drift') AND status = 'new'
  AND created_at > %(after)s
ORDER BY confidence DESC NULLS LAST, created_at DESC LIMIT %(k)s;

-- name: handoff_overnight_shown
UPDATE thoughts SET status = 'injected', injected_at = now()
WHERE thought_id = ANY(%s::uuid[]) AND status = 'new';
