-- Predictions (seed 000 §10.3) and reasoning trails (seed 000 §8.2-8.3):
-- agent/services/thinking/predictions.py, agent/services/thinking/decisions.py.

-- name: foresight_turn
SELECT created_at, user_id FROM day_table WHERE entry_id = %s;

-- name: prediction_insert
-- one per source turn: a replayed turn finds its prediction already there
INSERT INTO predictions (user_id, session_id, statement, domain, confidence, deadline, made_by,
                         source_entry_id, universal_embedding, detector, created_at)
SELECT d.user_id, d.session_id, %(statement)s, %(domain)s, %(confidence)s, %(deadline)s,
       %(made_by)s, d.entry_id, d.universal_embedding, %(detector)s, d.created_at
FROM day_table d WHERE d.entry_id = %(entry)s AND d.user_id IS NOT NULL
ON CONFLICT (source_entry_id) WHERE source_entry_id IS NOT NULL DO NOTHING
RETURNING prediction_id;

-- name: prediction_settle_candidates
-- the user's pending predictions made before this turn, closest first
SELECT p.prediction_id, p.statement,
       1 - (p.universal_embedding <=> d.universal_embedding) AS similarity
FROM day_table d
JOIN predictions p ON p.user_id = d.user_id AND p.status = 'pending'
 AND p.created_at <= d.created_at AND p.source_entry_id IS DISTINCT FROM d.entry_id
WHERE d.entry_id = %(entry)s AND p.universal_embedding IS NOT NULL
  AND d.universal_embedding IS NOT NULL
ORDER BY p.universal_embedding <=> d.universal_embedding
LIMIT %(k)s;

-- name: prediction_settle
UPDATE predictions p SET status = %(status)s, settled_at = d.created_at,
       settled_by_entry_id = d.entry_id, settlement = %(settlement)s::jsonb
FROM day_table d
WHERE p.prediction_id = %(id)s AND p.status = 'pending' AND d.entry_id = %(entry)s
RETURNING p.prediction_id;

-- name: prediction_expire
-- past their deadline with no settlement (consolidation's `predictions` operation)
UPDATE predictions SET status = 'expired', settled_at = %(now)s,
       settlement = jsonb_build_object('detector', 'deadline-passed',
                                       'deadline', deadline)
WHERE status = 'pending' AND deadline < %(now)s
RETURNING prediction_id;

-- name: predictions_of_user
SELECT prediction_id, made_by, domain, status, confidence, deadline, statement, settlement,
       detector, source_entry_id, settled_by_entry_id, created_at, settled_at
FROM predictions WHERE user_id = %(user)s
ORDER BY status = 'pending' DESC, created_at DESC LIMIT %(k)s;

-- name: predictions_calibration_of_user
-- v_calibration (revision 0015) for one user
SELECT domain, width_bucket(confidence, 0, 1.0000001, 5) AS bucket,
       round(min(confidence)::numeric, 2), round(max(confidence)::numeric, 2), count(*),
       round(avg(confidence)::numeric, 3),
       round(avg(CASE status WHEN 'correct' THEN 1.0 WHEN 'partially_correct' THEN 0.5
                 ELSE 0.0 END), 3)
FROM predictions
WHERE user_id = %(user)s AND status IN ('correct', 'wrong', 'partially_correct')
GROUP BY domain, bucket ORDER BY domain, bucket;

-- name: decision_insert
-- one per source turn; memory_id: the exit gate's decision memory of that turn, if any
INSERT INTO decisions (user_id, session_id, entry_id, memory_id, decision, alternatives,
                       rationale, universal_embedding, detector, created_at)
SELECT d.user_id, d.session_id, d.entry_id,
       COALESCE(%(memory)s::uuid,
                (SELECT m.memory_id FROM memories m WHERE m.source_entry_id = d.entry_id
                   AND m.memory_type = 'decision' ORDER BY m.created_at LIMIT 1)),
       %(decision)s, %(alternatives)s::jsonb, %(rationale)s, d.universal_embedding,
       %(detector)s, d.created_at
FROM day_table d WHERE d.entry_id = %(entry)s
ON CONFLICT (entry_id) WHERE entry_id IS NOT NULL DO NOTHING
RETURNING decision_id;

-- name: decision_outcome_candidates
-- the user's decisions with no outcome yet, made before this turn, closest first
SELECT c.decision_id, c.decision, 1 - (c.universal_embedding <=> d.universal_embedding)
FROM day_table d
JOIN decisions c ON c.user_id = d.user_id AND c.assessment IS NULL
 AND c.created_at <= d.created_at AND c.entry_id IS DISTINCT FROM d.entry_id
WHERE d.entry_id = %(entry)s AND c.universal_embedding IS NOT NULL
  AND d.universal_embedding IS NOT NULL
ORDER BY c.universal_embedding <=> d.universal_embedding
LIMIT %(k)s;

-- name: decision_set_outcome
UPDATE decisions c SET outcome = %(outcome)s, outcome_entry_id = d.entry_id,
       assessment = %(assessment)s, lesson = %(lesson)s, outcome_at = d.created_at
FROM day_table d
WHERE c.decision_id = %(id)s AND c.assessment IS NULL AND d.entry_id = %(entry)s
RETURNING c.decision_id;

-- name: decisions_link_memories
-- the exit gate made a decision memory of a decision's turn after the turn was read
UPDATE decisions c SET memory_id = m.memory_id
FROM memories m
WHERE c.memory_id IS NULL AND c.entry_id IS NOT NULL AND m.source_entry_id = c.entry_id
  AND m.memory_type = 'decision'
RETURNING c.decision_id, m.memory_id;

-- name: decisions_unread_memories
-- the exit gate's decision memories with no trail yet (consolidation's `decisions` operation)
SELECT m.memory_id, m.source_entry_id, m.content, m.user_id, m.session_id
FROM memories m
WHERE m.memory_type = 'decision' AND m.status = 'active'
  AND NOT EXISTS (SELECT 1 FROM decisions c WHERE c.memory_id = m.memory_id
                  OR (m.source_entry_id IS NOT NULL AND c.entry_id = m.source_entry_id))
ORDER BY m.created_at LIMIT %(k)s;

-- name: decision_insert_from_memory
INSERT INTO decisions (user_id, session_id, entry_id, memory_id, decision, alternatives,
                       rationale, universal_embedding, detector, created_at)
SELECT m.user_id, m.session_id, m.source_entry_id, m.memory_id, %(decision)s,
       %(alternatives)s::jsonb, %(rationale)s, m.universal_embedding, %(detector)s,
       m.created_at
FROM memories m WHERE m.memory_id = %(memory)s
ON CONFLICT (entry_id) WHERE entry_id IS NOT NULL DO NOTHING
RETURNING decision_id;

-- name: decisions_for_why
-- the trails linked to memories or turns (`cogd why`), or whose text contains %(text)s,
-- or close to %(q)s (a vector, or NULL); %(user)s scopes them like recall does (one
-- user's and no user's; NULL: every user's, the operator's `cogd why`)
SELECT decision_id, decision, alternatives, rationale, outcome, assessment, lesson,
       detector, memory_id, entry_id, outcome_entry_id, created_at
FROM decisions
WHERE (%(user)s::uuid IS NULL OR user_id IS NULL OR user_id = %(user)s::uuid)
  AND (memory_id = ANY(%(memories)s::uuid[]) OR entry_id = ANY(%(entries)s::uuid[])
   OR outcome_entry_id = ANY(%(entries)s::uuid[])
   OR (%(text)s::text IS NOT NULL AND (decision ILIKE '%%' || %(text)s || '%%'
       OR rationale ILIKE '%%' || %(text)s || '%%'))
   OR (%(q)s::vector IS NOT NULL AND universal_embedding IS NOT NULL
       AND 1 - (universal_embedding <=> %(q)s::vector) >= %(min_sim)s))
ORDER BY created_at DESC LIMIT 5;

-- name: forget_doomed_predictions
-- the predictions forget_turn_foresight removes: the problems and overnight thoughts that
-- quote them name them in source_ids ('prediction:<id>') and go with them
SELECT prediction_id FROM predictions WHERE source_entry_id = ANY(%(turns)s::uuid[])
    OR settled_by_entry_id = ANY(%(turns)s::uuid[]);

-- name: forget_turn_foresight
-- predictions and decisions made from (or settled by) forgotten turns or memories
WITH p AS (DELETE FROM predictions WHERE source_entry_id = ANY(%(turns)s::uuid[])
               OR settled_by_entry_id = ANY(%(turns)s::uuid[]) RETURNING 1),
c AS (DELETE FROM decisions WHERE entry_id = ANY(%(turns)s::uuid[])
          OR outcome_entry_id = ANY(%(turns)s::uuid[])
          OR memory_id = ANY(%(memories)s::uuid[]) RETURNING 1)
SELECT (SELECT count(*) FROM p), (SELECT count(*) FROM c);
