-- Consolidation passes (agent/services/background/consolidation.py).

-- name: consolidation_state_save
INSERT INTO worker_state (key, value) VALUES (%s, %s::jsonb) ON CONFLICT (key) DO UPDATE
SET value = EXCLUDED.value, updated_at = now();

-- name: consolidation_memory_metadata
UPDATE memories SET metadata = metadata || %s::jsonb WHERE memory_id = %s;

-- name: consolidation_state_load
SELECT value FROM worker_state WHERE key = %s;

-- name: consolidation_memory_reweigh
UPDATE memories
SET importance = %s, access_count = access_count + %s, last_accessed = greatest(last_accessed, %s), updated_at = now()
WHERE memory_id = %s;

-- name: consolidation_link_supersedes
INSERT INTO memory_links (source_id, target_id, link_type, strength)
VALUES (%s, %s, 'supersedes', 1.0) ON CONFLICT DO NOTHING;

-- name: consolidation_memory_supersede
UPDATE memories SET status = 'superseded', importance = least(importance, %s), updated_at = now()
WHERE memory_id = %s;

-- name: consolidation_link
INSERT INTO memory_links (source_id, target_id, link_type, strength, metadata)
VALUES (%s, %s, %s, %s, %s::jsonb) ON CONFLICT DO NOTHING;

-- name: consolidation_memory_decay
UPDATE memories
SET importance = %s, status = %s, updated_at = now(), metadata = metadata || jsonb_build_object('decayed_at', %s::text)
WHERE memory_id = %s;

-- name: consolidation_correction_conditions
UPDATE memories
SET fails_when = coalesce(fails_when, %s), fine_when = coalesce(fine_when, %s), metadata = metadata || '{"conditions_parsed": "regex heuristic"}'
WHERE memory_id = %s;

-- name: consolidation_goal_reweigh
UPDATE goals SET weight = %s, updated_at = now(), metadata = metadata || %s::jsonb
WHERE goal_id = %s;

-- name: consolidation_goal_history
INSERT INTO goals_history (goal_id, old_weight, new_weight, reason) VALUES (%s, %s, %s, %s);

-- name: consolidation_held_by
SELECT m.memory_id, m.status, m.content FROM memory_links l
  JOIN memories m ON m.memory_id = l.source_id WHERE l.target_id = %s AND l.link_type = 'supersedes'
ORDER BY m.created_at;

-- name: consolidation_why_node
SELECT m.memory_id, m.memory_type, m.status, m.importance, m.content, m.source_entry_id, d.role, d.created_at, d.content, d.external_id
FROM memories m LEFT JOIN day_table d ON d.entry_id = m.source_entry_id WHERE m.memory_id = %s;

-- name: consolidation_superseded_by
SELECT target_id FROM memory_links WHERE source_id = %s AND link_type = 'supersedes'
ORDER BY target_id;

-- name: consolidation_scratch_pending
SELECT s.id, s.entry_id, d.role, d.content, s.session_id, s.user_id FROM scratch_buffer s LEFT
  JOIN day_table d USING (entry_id) WHERE s.status = 'pending' ORDER BY s.id LIMIT 500;

-- name: consolidation_scratch_drop
UPDATE scratch_buffer SET status = 'dropped', processed_at = now() WHERE id = %s;

-- name: consolidation_scratch_drop_attempt
UPDATE scratch_buffer SET status = 'dropped', processed_at = now(), attempts = attempts + 1
WHERE id = %s;

-- name: consolidation_recall_log_since
SELECT id, items, created_at FROM recall_log WHERE id > %s ORDER BY id;

-- name: consolidation_insight_insert
-- emotion: the imprint of the source it is filed under (its last source; seed 000 §3.4)
INSERT INTO memories (memory_type, content, universal_embedding, native_embedding, native_model, importance, confidence, evidence_count, metadata, user_id, session_id, emotion) SELECT 'insight', %s, %s::vector, %s::halfvec, %s, %s, 0.6, %s, %s::jsonb, user_id, session_id, emotion
FROM memories WHERE memory_id = %s RETURNING memory_id;

-- name: consolidation_extractive_insight_insert
-- issue 39: an extractive insight (no model) is its most informative source's text, so it
-- keeps that source's content, vectors and emotion: it is found as the source was
INSERT INTO memories (memory_type, content, universal_embedding, native_embedding, native_model, importance, confidence, evidence_count, metadata, user_id, session_id, emotion) SELECT 'insight', content, universal_embedding, native_embedding, native_model, %s, 0.6, %s, %s::jsonb, user_id, session_id, emotion
FROM memories WHERE memory_id = %s RETURNING memory_id;

-- name: consolidation_linked_pairs
SELECT least(source_id, target_id)::text, greatest(source_id, target_id)::text FROM memory_links;

-- name: consolidation_claim_updates
-- pairs where one memory's claim retired the other's on the same slot (revision 0022):
-- a knowledge update ("I live in Berlin", later "I moved to Lisbon"), not a contradiction
SELECT least(memory_id, retired_by)::text, greatest(memory_id, retired_by)::text, slot
FROM claims WHERE retired_by IS NOT NULL;

-- name: consolidation_flag_contradictions
UPDATE memories SET metadata = metadata || '{"flag": "contradiction"}' WHERE memory_id = ANY(%s);

-- name: consolidation_decay_candidates
-- unused since cogd wrote them (written_at, revision 0019), not since a client's
-- back-dated created_at: an imported year-old line does not fade on arrival
SELECT memory_id, importance, access_count, coalesce(last_accessed, written_at), memory_type, metadata->>'decayed_at'
FROM memories WHERE status = 'active'
  AND coalesce(last_accessed, written_at) < %s - make_interval(days => %s);

-- name: consolidation_unparsed_corrections
SELECT memory_id, content FROM memories WHERE memory_type = 'correction'
  AND NOT metadata ? 'conditions_parsed';

-- name: consolidation_user_turns_since
SELECT d.entry_id, d.session_id, d.user_id, d.content, d.created_at FROM day_table d
WHERE d.role = 'user' AND d.message_type = 'dialogue' AND NOT EXISTS ( SELECT 1 FROM intentions i
WHERE i.source_entry_id = d.entry_id)
  AND d.created_at > coalesce((SELECT (value->>'scanned_to')::timestamptz FROM  worker_state
WHERE key = 'consolidation.intentions'), '-infinity') ORDER BY d.created_at LIMIT 5000;

-- name: consolidation_intention_insert
-- with its source turn's vector, so it surfaces when its topic comes up and a later turn
-- can be matched against it (agent/services/reach/intentions.py)
INSERT INTO intentions (user_id, session_id, source_entry_id, kind, content, created_at,
                        universal_embedding)
VALUES (%(user)s, %(session)s, %(entry)s, %(kind)s, %(content)s, %(at)s,
        (SELECT universal_embedding FROM day_table WHERE entry_id = %(entry)s))
ON CONFLICT DO NOTHING;

-- name: consolidation_last_user_turn_at
SELECT max(created_at) FROM day_table WHERE role = 'user';

-- name: consolidation_open_intentions
SELECT i.intention_id, i.created_at, i.carried_count, i.urgency, i.last_carried_session, count(s.session_id), (array_agg(s.session_id
ORDER BY s.started_at DESC))[1] FROM intentions i LEFT JOIN sessions s ON s.user_id = i.user_id
  AND s.started_at > i.created_at AND s.session_id <> i.session_id WHERE i.status = 'open'
GROUP BY i.intention_id;

-- name: consolidation_intention_carry
UPDATE intentions
SET carried_count = %s, urgency = %s, last_carried_session = %s, updated_at = now()
WHERE intention_id = %s;

-- name: consolidation_goal_candidates
-- the span in days is measured on written_at, when cogd wrote the rows (revision 0019):
-- a client's back-dated created_at (an import's timestamps) is no evidence of recurrence;
-- the memory's user is the promoted goal's
SELECT m.memory_id, m.content, m.evidence_count, extract(epoch
FROM greatest(m.updated_at, max(coalesce(s.written_at, m.written_at))) - least(m.written_at, min(coalesce(s.written_at, m.written_at)))) / 86400, m.metadata, m.user_id
FROM memories m LEFT JOIN memory_links l ON l.source_id = m.memory_id AND l.link_type = 'supersedes'
  LEFT JOIN memories s ON s.memory_id = l.target_id WHERE m.status = 'active'
  AND m.evidence_count >= %s GROUP BY m.memory_id;

-- name: consolidation_goal_promoted_history
INSERT INTO goals_history (goal_id, old_weight, new_weight, reason, details)
VALUES (%s, NULL, %s, 'promoted from evidence', %s::jsonb);

-- name: consolidation_proposal_insert
INSERT INTO proposals (target_layer, kind, payload, evidence)
VALUES (0, 'new_value', %s::jsonb, %s::jsonb);

-- name: consolidation_goals_with_evidence
-- with the goal's user last: dominance is judged among one user's goals
SELECT g.goal_id, g.name, g.weight, g.actions, g.useful_actions, g.metadata, m.evidence_count,
       g.user_id
FROM goals g LEFT JOIN memories m ON m.memory_id::text = g.metadata->>'memory_id'
WHERE g.status = 'active';

-- name: consolidation_scratched_then_recalled
SELECT count(DISTINCT g.entry_id) FROM gate_decisions g JOIN recall_log r ON r.id > %s
  AND r.created_at > g.created_at
  AND r.items @> jsonb_build_array(jsonb_build_object('id', 'day_table:' || g.entry_id::text))
WHERE g.gate = 'exit' AND g.decision = 'drop' AND EXISTS (SELECT 1
FROM jsonb_array_elements(r.items) e WHERE e->>'id' = 'day_table:' || g.entry_id::text
  AND e->>'verdict' <> 'no_match');

-- name: consolidation_persisted_unused
SELECT count(*), count(*) FILTER (WHERE m.access_count = 0) FROM gate_decisions g
  JOIN memories m USING (memory_id) WHERE g.gate = 'exit' AND g.decision IN ('keep', 'flag')
  AND m.created_at > %s::timestamptz AND m.created_at <= to_timestamp(%s);

-- name: consolidation_recall_log_head
SELECT coalesce(max(id), 0) FROM recall_log;

-- name: consolidation_log_insert
INSERT INTO consolidation_log (pass_id, operation, inputs, outputs)
VALUES (%s, %s, %s::jsonb, %s::jsonb);

-- name: consolidation_memory_importance
SELECT importance FROM memories WHERE memory_id = %s;

-- name: consolidation_goal_insert
-- the goal is its memory's user's (revision 0019): it reaches only that user's prompt
INSERT INTO goals (name, description, weight, source, evidence_count, metadata, user_id)
VALUES (%s, %s, %s, 'promotion', %s, %s::jsonb, %s) ON CONFLICT (name) DO NOTHING RETURNING goal_id;

-- name: consolidation_proposal_exists
SELECT 1 FROM proposals WHERE payload->>'memory_id' = %s;

-- name: consolidation_active_memories
-- the newest active memories with a vector (insights too, unless %(insights)s is false);
-- the caller merges and pairs them only within one user (user_id, the last column)
SELECT memory_id, content, universal_embedding::text, memory_type, evidence_count,
       created_at, importance, user_id
FROM memories
WHERE status = 'active' AND universal_embedding IS NOT NULL
  AND (%(insights)s OR memory_type <> 'insight')
ORDER BY created_at DESC LIMIT %(k)s;
