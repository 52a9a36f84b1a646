-- A user's morning brief: the sections seed 000 §9.7 asks for (night_cycle/user_brief.py).

-- name: user_brief_since
-- when the user's previous brief was written (the brief reports what changed since)
SELECT max(b.created_at) FROM night_briefs b WHERE b.user_id = %(user)s AND b.run_id <> %(run)s;

-- name: user_brief_predictions_due
-- the user's pending predictions whose deadline falls before %(until)s (overdue first)
SELECT prediction_id, statement, confidence, deadline FROM predictions
WHERE user_id = %(user)s AND status = 'pending' AND deadline IS NOT NULL
  AND deadline < %(until)s
ORDER BY deadline, prediction_id LIMIT %(k)s;

-- name: user_brief_predictions_settled
-- the user's predictions checked since the previous brief
SELECT prediction_id, statement, status, settled_at FROM predictions
WHERE user_id = %(user)s AND settled_at IS NOT NULL AND settled_at > %(since)s
ORDER BY settled_at DESC, prediction_id LIMIT %(k)s;

-- name: user_brief_models
-- the user's cognitive models made or changed since the previous brief
SELECT model_id, statement, status, confidence, created_at > %(since)s FROM cognitive_models
WHERE user_id = %(user)s AND updated_at > %(since)s
ORDER BY updated_at DESC, model_id LIMIT %(k)s;

-- name: user_brief_principles
-- the user's principles made, confirmed or challenged since the previous brief
SELECT principle_id, statement, status, confidence FROM principles
WHERE user_id = %(user)s AND updated_at > %(since)s
ORDER BY updated_at DESC, principle_id LIMIT %(k)s;

-- name: user_brief_contradictions
-- flagged `contradicts` links between two of the user's memories that are both still
-- active: not resolved (a resolution supersedes the losing memory, or both on a merge)
SELECT l.source_id, s.content, l.target_id, t.content, l.created_at
FROM memory_links l
JOIN memories s ON s.memory_id = l.source_id
JOIN memories t ON t.memory_id = l.target_id
WHERE l.link_type = 'contradicts' AND s.user_id = %(user)s AND t.user_id = %(user)s
  AND s.status = 'active' AND t.status = 'active'
ORDER BY l.created_at DESC LIMIT %(k)s;

-- name: user_brief_users
-- the users with something for a brief besides blocks and thoughts: a prediction due, a
-- model or principle changed since %(since_default)s, an open contradiction
SELECT u.user_id, u.handle FROM users u
WHERE EXISTS (SELECT 1 FROM predictions p WHERE p.user_id = u.user_id
              AND p.status = 'pending' AND p.deadline < %(until)s)
   OR EXISTS (SELECT 1 FROM cognitive_models m WHERE m.user_id = u.user_id
              AND m.updated_at > %(since_default)s)
   OR EXISTS (SELECT 1 FROM memory_links l JOIN memories s ON s.memory_id = l.source_id
              JOIN memories t ON t.memory_id = l.target_id
              WHERE l.link_type = 'contradicts' AND s.user_id = u.user_id
                AND t.user_id = u.user_id AND s.status = 'active' AND t.status = 'active')
ORDER BY u.handle;

-- name: user_brief_latest
-- the user's newest brief written after %(after)s (the handoff shows its TL;DR)
SELECT run_id, content FROM night_briefs
WHERE user_id = %(user)s AND created_at > %(after)s
ORDER BY run_id DESC LIMIT 1;
