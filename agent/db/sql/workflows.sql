-- Workflow patterns (seed 000 §10.5): detection in consolidation, the offer in a turn, and
-- the completion or skip of an offer (agent/services/reach/workflows.py).

-- name: workflows_users_since
-- users with a user turn written in (%(since)s, %(now)s], oldest activity first: a
-- detection pass reads only them (the watermark is the last turn it read)
SELECT user_id, max(created_at) AS last_at FROM day_table
WHERE role = 'user' AND message_type = 'dialogue' AND user_id IS NOT NULL
  AND created_at > %(since)s AND created_at <= %(now)s
GROUP BY user_id ORDER BY last_at LIMIT %(k)s;

-- name: workflows_user_turns
-- the user turns of a user's %(k)s latest sessions, session by session, in order
WITH recent AS (
    SELECT session_id, min(created_at) AS first_at, max(created_at) AS last_at
    FROM day_table
    WHERE user_id = %(user)s AND role = 'user' AND message_type = 'dialogue'
    GROUP BY session_id ORDER BY last_at DESC LIMIT %(k)s)
SELECT d.session_id, d.entry_id, d.content FROM day_table d
JOIN recent r ON r.session_id = d.session_id
WHERE d.role = 'user' AND d.message_type = 'dialogue'
ORDER BY r.first_at, d.session_id, d.created_at, d.turn_number;

-- name: workflows_of_user
SELECT workflow_id, signature, steps, source_sessions, confidence, status FROM workflows
WHERE user_id = %s;

-- name: workflows_insert
INSERT INTO workflows (user_id, name, trigger, steps, confidence, source_sessions, signature,
                       universal_embedding, detector)
VALUES (%(user)s, %(name)s, %(trigger)s, %(steps)s::jsonb, %(confidence)s,
        %(sessions)s::jsonb, %(signature)s, %(vec)s::vector, %(detector)s)
ON CONFLICT (user_id, signature) DO NOTHING RETURNING workflow_id;

-- name: workflows_confirm
-- seen in more sessions than before (seed 000 §10.5's confirmation)
UPDATE workflows SET source_sessions = %(sessions)s::jsonb, confidence = %(confidence)s,
       updated_at = now()
WHERE workflow_id = %(id)s;

-- name: workflows_matching
-- a user's active workflows whose trigger is at least %(min_sim)s close to the turn
SELECT workflow_id, name, steps, source_sessions, confidence,
       1 - (universal_embedding <=> %(q)s::vector) AS similarity
FROM workflows
WHERE user_id = %(user)s AND status = 'active' AND universal_embedding IS NOT NULL
  AND 1 - (universal_embedding <=> %(q)s::vector) >= %(min_sim)s
ORDER BY universal_embedding <=> %(q)s::vector LIMIT %(k)s;

-- name: workflows_matched
UPDATE workflows SET times_matched = times_matched + 1, last_matched_at = now(),
       updated_at = now()
WHERE workflow_id = %s;

-- name: workflows_settle
-- an offer's outcome: completed (the user followed the remaining steps) or skipped
UPDATE workflows SET confidence = %(confidence)s, status = %(status)s,
       times_completed = times_completed + %(completed)s,
       times_skipped = times_skipped + %(skipped)s, updated_at = now()
WHERE workflow_id = %(id)s RETURNING confidence, status;

-- name: workflows_confidence
SELECT confidence, status FROM workflows WHERE workflow_id = %s;

-- name: workflows_offer_save
-- the open offer of a workflow (one per workflow): settled by the next match or a pass
INSERT INTO worker_state (key, value) VALUES ('workflows.offer.' || %(id)s, %(value)s::jsonb)
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now();

-- name: workflows_offers
SELECT key, value FROM worker_state WHERE starts_with(key, 'workflows.offer.') ORDER BY key;

-- name: workflows_offer_drop
DELETE FROM worker_state WHERE key = 'workflows.offer.' || %s;

-- name: workflows_session_turns_after
-- a session's user turns after an offer's turn (what the user did next)
SELECT content FROM day_table
WHERE session_id = %(session)s AND role = 'user' AND message_type = 'dialogue'
  AND created_at > %(at)s
ORDER BY created_at, turn_number;

-- name: workflows_session_last_turn
SELECT max(created_at) FROM day_table WHERE session_id = %s AND message_type = 'dialogue';
