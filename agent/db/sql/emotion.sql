-- The emotional state (seed 000 §3; agent/services/conversation/emotion.py).

-- name: emotion_latest
-- A user's latest state row (the decay toward the temperament is applied on read, in code).
SELECT valence, energy, openness, label, detector, created_at, entry_id
FROM emotional_state WHERE user_id = %(user_id)s
ORDER BY created_at DESC, id DESC LIMIT 1;

-- name: emotion_insert
-- One row per user turn: a replayed turn (the same entry_id) inserts nothing.
INSERT INTO emotional_state (user_id, entry_id, valence, energy, openness, label, detector,
                             signals, created_at)
VALUES (%(user_id)s, %(entry_id)s, %(valence)s, %(energy)s, %(openness)s, %(label)s,
        %(detector)s, %(signals)s::jsonb, %(created_at)s)
ON CONFLICT (entry_id) DO NOTHING
RETURNING id;

-- name: emotion_of_entry
SELECT valence, energy, openness, label, detector, created_at, entry_id
FROM emotional_state WHERE entry_id = %(entry_id)s;

-- name: emotion_memory_imprints
-- The emotional imprints of recall's memory candidates (mood congruence, seed 000 §4.2).
SELECT memory_id, emotion FROM memories
WHERE memory_id = ANY(%(ids)s::uuid[]) AND emotion IS NOT NULL;

-- name: frustration_prompt_window
-- the frustration heuristic's window for a prompt not stored yet (`cogd hook`): the
-- session's last user turns (as `cogd watch` imported them), newest first, with their
-- universal vectors
SELECT content, universal_embedding::text FROM day_table
WHERE session_id = %(session)s AND role = 'user' AND message_type = 'dialogue'
ORDER BY turn_number DESC LIMIT %(n)s;

-- name: frustration_session_user_turns
-- the frustration heuristic's window (agent/services/conversation/frustration.py): a user
-- turn and the user turns of its session before it, newest first, with their universal
-- vectors (the rephrase cue compares them)
SELECT d.content, d.universal_embedding::text
FROM day_table d JOIN day_table t ON t.entry_id = %(entry_id)s
WHERE d.session_id = t.session_id AND d.role = 'user' AND d.message_type = 'dialogue'
  AND d.turn_number <= t.turn_number
ORDER BY d.turn_number DESC LIMIT %(n)s;
