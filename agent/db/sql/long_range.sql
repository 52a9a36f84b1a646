-- Long-range memory at a session start (agent/services/reach/long_range.py; seed 000 §4.6).

-- name: long_range_landmarks
-- one user's landmarks: active memories flagged landmark at encoding, or as important as
-- a landmark (seed 000 §4.6.2: importance >= 0.9), whatever their age
SELECT memory_id, content, importance, created_at FROM memories
WHERE user_id = %(user)s AND status = 'active'
  AND (landmark OR importance >= %(min)s)
ORDER BY importance DESC, created_at DESC LIMIT %(k)s;

-- name: long_range_window
-- one user's most important active memories and milestones (the night cycle's, revision
-- 0025) dated in [at - end, at - start) days: seed 000 §4.6.1 reads both collections
SELECT kind, id, content, importance, at FROM (
    SELECT 'memory' AS kind, memory_id AS id, content, importance, created_at AS at
    FROM memories
    WHERE user_id = %(user)s AND status = 'active' AND importance >= %(min)s
      AND created_at >= %(at)s - %(end)s * interval '1 day'
      AND created_at < %(at)s - %(start)s * interval '1 day'
    UNION ALL
    SELECT 'milestone', milestone_id, content, importance, at FROM milestones
    WHERE user_id = %(user)s AND importance >= %(min)s
      AND at >= %(at)s - %(end)s * interval '1 day'
      AND at < %(at)s - %(start)s * interval '1 day') w
ORDER BY importance DESC, at DESC LIMIT %(k)s;
