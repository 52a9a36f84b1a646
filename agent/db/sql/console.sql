-- The web console (`cogd serve` /ui, agent/commands/console; revision 0027). Every read
-- names the caller's user: a console page never shows another user's rows.

-- name: console_session_insert
-- a login: the session's secret is stored hashed; (token_id, user_id) must be the token's
-- own pair (foreign key) and the token live (trigger)
INSERT INTO console_sessions (secret_hash, token_id, user_id, csrf_secret, expires_at,
                              user_agent)
VALUES (%(secret_hash)s, %(token_id)s, %(user_id)s, %(csrf)s,
        now() + make_interval(secs => %(seconds)s), %(user_agent)s)
RETURNING session_id, expires_at;

-- name: console_session_lookup
-- the live session of a cookie: not ended, not expired, and its token not revoked; the
-- token is marked used, as tokens_authenticate marks an API call's (at most once a
-- minute, so that a page's requests do not each write the row)
WITH live AS (
    SELECT s.session_id, s.token_id, s.user_id, u.handle, t.operator, s.csrf_secret,
           s.expires_at
    FROM console_sessions s
    JOIN api_tokens t ON t.token_id = s.token_id
    JOIN users u ON u.user_id = s.user_id
    WHERE s.secret_hash = %(secret_hash)s AND s.revoked_at IS NULL AND s.expires_at > now()
      AND t.revoked_at IS NULL
), used AS (
    UPDATE api_tokens t SET last_used_at = now()
    FROM live
    WHERE t.token_id = live.token_id
      AND (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute')
)
SELECT session_id, token_id, user_id, handle, operator, csrf_secret, expires_at FROM live;

-- name: console_session_end
UPDATE console_sessions SET revoked_at = now(), ended_by = %(how)s
WHERE session_id = %(session_id)s AND revoked_at IS NULL
RETURNING session_id;

-- name: console_timeline
-- the user's history, newest first, one page after the (created_at, id) cursor: their
-- turns (with their session and the memory made from each, an active one first), and
-- their memories that have no turn in day_table (insights, and memories whose turn the
-- night cycle's cleanup removed: the day's record once its turns are gone)
SELECT * FROM (
    (SELECT 'turn' AS kind, d.entry_id AS id, d.session_id, s.channel, s.started_at,
            s.external_id, d.role, d.speaker, d.content, d.created_at, d.message_type,
            (SELECT m.memory_id FROM memories m
             WHERE m.source_entry_id = d.entry_id AND m.user_id = %(user_id)s
             ORDER BY (m.status = 'active') DESC, m.created_at LIMIT 1) AS memory_id,
            NULL::text AS status
     FROM day_table d JOIN sessions s ON s.session_id = d.session_id
     WHERE d.user_id = %(user_id)s
       AND (%(before)s::timestamptz IS NULL
            OR (d.created_at, d.entry_id) < (%(before)s::timestamptz, %(before_id)s::uuid))
     ORDER BY d.created_at DESC, d.entry_id DESC
     LIMIT %(limit)s)
    UNION ALL
    (SELECT 'memory', m.memory_id, m.session_id, s.channel, s.started_at, s.external_id,
            NULL, NULL, m.content, m.created_at, m.memory_type, m.memory_id, m.status
     FROM memories m LEFT JOIN sessions s ON s.session_id = m.session_id
     WHERE m.user_id = %(user_id)s AND m.source_entry_id IS NULL
       AND (%(before)s::timestamptz IS NULL
            OR (m.created_at, m.memory_id) < (%(before)s::timestamptz, %(before_id)s::uuid))
     ORDER BY m.created_at DESC, m.memory_id DESC
     LIMIT %(limit)s)
) history
ORDER BY created_at DESC, id DESC
LIMIT %(limit)s;

-- name: console_memories_of_turns
-- the memory made from each of these turns (the user's own; an active one first)
SELECT DISTINCT ON (m.source_entry_id) m.source_entry_id, m.memory_id
FROM memories m
WHERE m.source_entry_id = ANY(%(entry_ids)s::uuid[]) AND m.user_id = %(user_id)s
ORDER BY m.source_entry_id, (m.status = 'active') DESC, m.created_at;

-- name: console_own_memories
-- which of these memories are the user's own (a memory page exists for those only)
SELECT memory_id FROM memories
WHERE memory_id = ANY(%(ids)s::uuid[]) AND user_id = %(user_id)s;

-- name: console_memory_detail
-- what the memory page shows beside MemoryAPI.memory: use, decay and evidence
SELECT access_count, last_accessed, written_at, metadata->>'decayed_at', landmark,
       confidence, evidence_count, updated_at, emotion
FROM memories WHERE memory_id = %(memory_id)s AND user_id = %(user_id)s;

-- name: console_memory_links
-- a memory's links both ways, newest first, at most `limit` (picked before the join: a
-- memory with many links costs a top-N of its links only); the other end's text only
-- when it is the user's or of no user (an insight merged across users shows that it
-- exists, not what it says)
WITH picked AS (
    SELECT id, link_type, strength, created_at,
           CASE WHEN source_id = %(memory_id)s THEN 'out' ELSE 'in' END AS direction,
           CASE WHEN source_id = %(memory_id)s THEN target_id ELSE source_id END AS other
    FROM memory_links
    WHERE source_id = %(memory_id)s OR target_id = %(memory_id)s
    ORDER BY created_at DESC, id DESC
    LIMIT %(limit)s)
SELECT p.link_type, p.strength, p.created_at, p.direction, o.memory_id, o.memory_type,
       o.status,
       CASE WHEN o.user_id IS NULL OR o.user_id = %(user_id)s THEN o.content END AS content,
       o.user_id IS NOT DISTINCT FROM %(user_id)s AS own
FROM picked p JOIN memories o ON o.memory_id = p.other
ORDER BY p.created_at DESC, p.id DESC;

-- name: console_memory_links_count
SELECT count(*) FROM memory_links
WHERE source_id = %(memory_id)s OR target_id = %(memory_id)s;
