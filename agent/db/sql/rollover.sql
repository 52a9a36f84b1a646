-- The rolling window and the exit gate (agent/services/conversation/rollover.py).

-- name: rollover_rolled_out
SELECT entry_id, role, content, token_count, session_id, user_id
FROM (
    SELECT entry_id, role, content, token_count, session_id, user_id, turn_number,
           sum(coalesce(token_count, 0)) OVER (ORDER BY turn_number DESC) AS newer_tokens,
           row_number() OVER (ORDER BY turn_number DESC) AS age
    FROM day_table
    WHERE session_id = %(session_id)s AND message_type = 'dialogue'
) t
WHERE age > 1 AND newer_tokens > %(budget)s
  AND NOT EXISTS (SELECT 1 FROM gate_decisions g
                  WHERE g.gate = 'exit' AND g.entry_id = t.entry_id)
ORDER BY turn_number
LIMIT %(limit)s;

-- name: rollover_nearest_memory
-- the closest memory of the turn's own user (a turn of no user: of no user): another
-- user's memory is never what a turn confirms, reinforces or contradicts (issue 38).
-- The HNSW scan filters by user, so the caller turns on pgvector's iterative scan for its
-- transaction (rollover_iterative_scan): a user with few memories among many still finds
-- theirs; the outer ORDER BY restores the exact order the relaxed scan may not keep
SELECT memory_id, content, 1 - dist AS sim
FROM (SELECT m.memory_id, m.content, m.universal_embedding <=> d.universal_embedding AS dist
      FROM day_table d
      JOIN memories m ON m.user_id IS NOT DISTINCT FROM d.user_id
      WHERE d.entry_id = %s AND m.universal_embedding IS NOT NULL AND m.status <> 'archived'
      ORDER BY m.universal_embedding <=> d.universal_embedding
      LIMIT 1) nearest
ORDER BY dist;

-- name: rollover_iterative_scan
-- for this transaction only: HNSW scans go on past a filter's rejects (pgvector >= 0.8)
SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true);

-- name: rollover_insert_memory
-- emotion: the imprint (seed 000 §3.4), the state recorded for the source turn, else the
-- user's latest state at or before it (an assistant turn: the state its question left)
INSERT INTO memories (user_id, session_id, source_entry_id, memory_type, content,
                      universal_embedding, native_embedding, native_model, importance,
                      confidence, landmark, metadata, created_at, emotion)
SELECT d.user_id, d.session_id, d.entry_id, %(type)s, d.content, d.universal_embedding,
       d.native_embedding, d.native_model, %(importance)s, %(confidence)s, %(importance)s >= 0.9,
       %(metadata)s::jsonb, d.created_at,
       coalesce((SELECT jsonb_build_object('valence', e.valence, 'energy', e.energy,
                                           'openness', e.openness, 'label', e.label)
                 FROM emotional_state e WHERE e.entry_id = d.entry_id),
                (SELECT jsonb_build_object('valence', e.valence, 'energy', e.energy,
                                           'openness', e.openness, 'label', e.label)
                 FROM emotional_state e WHERE e.user_id = d.user_id
                   AND e.created_at <= d.created_at
                 ORDER BY e.created_at DESC, e.id DESC LIMIT 1))
FROM day_table d WHERE d.entry_id = %(entry_id)s
ON CONFLICT (source_entry_id, memory_type) WHERE source_entry_id IS NOT NULL DO NOTHING
RETURNING memory_id;

-- name: rollover_reinforce
UPDATE memories
SET evidence_count = evidence_count + 1,
    importance = least(1.0, importance + %(gain)s / log(2, evidence_count + 2)),
    updated_at = now()
WHERE memory_id = %(memory_id)s;

-- name: rollover_insert_exit
INSERT INTO gate_decisions (gate, entry_id, scratch_id, session_id, decision, score, signals,
                            reason, memory_id)
VALUES ('exit', %s, %s, %s, %s, %s, %s::jsonb, %s, %s);

-- name: rollover_scratch_processed
UPDATE scratch_buffer SET status = %s, processed_at = now(), attempts = attempts + 1
WHERE entry_id = %s AND status = 'pending';

-- name: rollover_tuned_persist_threshold
SELECT value->>'persist_threshold' FROM worker_state WHERE key = 'gate_tuning';

-- name: rollover_scratch_of_turn
SELECT id FROM scratch_buffer WHERE entry_id = %s ORDER BY id LIMIT 1;

-- name: rollover_link_contradiction
INSERT INTO memory_links (source_id, target_id, link_type, strength, metadata)
VALUES (%s, %s, 'contradicts', %s, %s::jsonb) ON CONFLICT DO NOTHING;

-- name: rollover_pending_scratch_of_turn
SELECT id FROM scratch_buffer WHERE entry_id = %s AND status = 'pending';

-- name: rollover_lock_turn
SELECT pg_advisory_xact_lock(%s::int4, hashtext(%s));

-- name: rollover_existing_memory
-- revision 0011: one memory of a kind per turn; a turn persisted already keeps its memory
SELECT memory_id FROM memories WHERE source_entry_id = %(entry_id)s AND memory_type = %(type)s;

-- name: rollover_exit_done
SELECT 1 FROM gate_decisions WHERE gate = 'exit' AND entry_id = %s;
