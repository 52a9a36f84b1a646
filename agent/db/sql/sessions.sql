-- Users and sessions (agent/services/sessions.py).

-- name: sessions_user_upsert
INSERT INTO users (handle, tier) VALUES (%s, coalesce(%s, 'normal')) ON CONFLICT (handle) DO UPDATE
SET tier = coalesce(%s, users.tier) RETURNING user_id;

-- name: sessions_user_by_handle
SELECT user_id FROM users WHERE handle = %s;

-- name: sessions_session_upsert_external
-- the session's owner is returned too: a key another user's session holds is refused
-- (agent/services/sessions.py), never shared
INSERT INTO sessions (user_id, channel, external_id) VALUES (%s, %s, %s) ON CONFLICT (external_id)
  DO UPDATE SET external_id = EXCLUDED.external_id RETURNING session_id, user_id;

-- name: sessions_session_insert
INSERT INTO sessions (user_id, channel) VALUES (%s, %s) RETURNING session_id;

-- name: sessions_session_exists
SELECT session_id, user_id FROM sessions WHERE session_id = %s;
