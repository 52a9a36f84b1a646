-- Users and sessions (agent/services/records/sessions.py).

-- name: sessions_user_upsert
INSERT INTO users (handle, tier) VALUES (%s, coalesce(%s, 'normal')) ON CONFLICT (handle) DO UPDATE
SET tier = coalesce(%s, users.tier) RETURNING user_id;

-- name: sessions_user_by_handle
SELECT user_id FROM users WHERE handle = %s;

-- name: sessions_session_upsert_external
-- keys are unique per user (revision 0019): another user's session of the same key is
-- neither found nor in the way; the owner is returned for agent/services/records/sessions.py's check
INSERT INTO sessions (user_id, channel, external_id) VALUES (%s, %s, %s)
ON CONFLICT (user_id, external_id)
  DO UPDATE SET external_id = EXCLUDED.external_id RETURNING session_id, user_id;

-- name: sessions_session_insert
INSERT INTO sessions (user_id, channel) VALUES (%s, %s) RETURNING session_id;

-- name: sessions_session_exists
SELECT session_id, user_id FROM sessions WHERE session_id = %s;
