-- Contradiction resolution (issue 42 item 3; seed 000 §4.5.3): agent/services/memory/
-- contradictions.py. A contradiction is a `contradicts` link in memory_links; memory a is
-- the older of the two (by created_at, then id), b the newer.

-- name: contradictions_open
-- the unresolved contradictions of one user (both memories theirs), or of every user
-- (user_id NULL: the operator's view), newest flag first
SELECT l.id, l.created_at, l.metadata, l.strength,
       a.memory_id, a.content, a.status, a.created_at, a.memory_type,
       b.memory_id, b.content, b.status, b.created_at, b.memory_type,
       a.user_id, u.handle
FROM memory_links l
JOIN memories s ON s.memory_id = l.source_id
JOIN memories t ON t.memory_id = l.target_id
CROSS JOIN LATERAL (SELECT CASE WHEN (s.created_at, s.memory_id) <= (t.created_at, t.memory_id)
                                THEN s.memory_id ELSE t.memory_id END AS a_id,
                           CASE WHEN (s.created_at, s.memory_id) <= (t.created_at, t.memory_id)
                                THEN t.memory_id ELSE s.memory_id END AS b_id) o
JOIN memories a ON a.memory_id = o.a_id
JOIN memories b ON b.memory_id = o.b_id
LEFT JOIN users u ON u.user_id = a.user_id
WHERE l.link_type = 'contradicts'
  AND NOT EXISTS (SELECT 1 FROM contradiction_resolutions r WHERE r.link_id = l.id)
  AND (%(user_id)s::uuid IS NULL
       OR (a.user_id = %(user_id)s::uuid AND b.user_id = %(user_id)s::uuid))
ORDER BY l.created_at DESC, l.id DESC
LIMIT %(limit)s;

-- name: contradictions_link_for_update
-- one contradiction (a, b in created_at order) and its resolution if any, the link locked
SELECT l.id, l.metadata,
       a.memory_id, a.content, a.user_id, a.session_id, a.memory_type, a.importance,
       b.memory_id, b.content, b.user_id, b.session_id, b.memory_type, b.importance,
       r.resolution_id, r.action, r.created_at
FROM memory_links l
JOIN memories s ON s.memory_id = l.source_id
JOIN memories t ON t.memory_id = l.target_id
CROSS JOIN LATERAL (SELECT CASE WHEN (s.created_at, s.memory_id) <= (t.created_at, t.memory_id)
                                THEN s.memory_id ELSE t.memory_id END AS a_id,
                           CASE WHEN (s.created_at, s.memory_id) <= (t.created_at, t.memory_id)
                                THEN t.memory_id ELSE s.memory_id END AS b_id) o
JOIN memories a ON a.memory_id = o.a_id
JOIN memories b ON b.memory_id = o.b_id
LEFT JOIN contradiction_resolutions r ON r.link_id = l.id
WHERE l.id = %(link_id)s AND l.link_type = 'contradicts'
FOR UPDATE OF l;

-- name: contradictions_merged_insert
-- the merged statement: a new memory of the newer memory's user, session and type
INSERT INTO memories (memory_type, content, universal_embedding, native_embedding,
                      native_model, importance, confidence, evidence_count, metadata,
                      user_id, session_id, created_at)
VALUES (%(type)s, %(content)s, %(universal)s::vector, %(native)s::halfvec, %(native_model)s,
        %(importance)s, 0.8, 2, %(metadata)s::jsonb, %(user_id)s, %(session_id)s, now())
RETURNING memory_id;

-- name: contradictions_supersede_link
INSERT INTO memory_links (source_id, target_id, link_type, strength, metadata)
VALUES (%(kept)s, %(loser)s, 'supersedes', 1.0, %(metadata)s::jsonb)
ON CONFLICT (source_id, target_id, link_type) DO UPDATE
  SET metadata = memory_links.metadata || EXCLUDED.metadata;

-- name: contradictions_supersede_memory
UPDATE memories SET status = 'superseded', updated_at = now(),
  metadata = metadata || jsonb_build_object('superseded_by_resolution', %(resolution_id)s::bigint)
WHERE memory_id = %(loser)s;

-- name: contradictions_insert_resolution
INSERT INTO contradiction_resolutions (link_id, user_id, action, kept_id, superseded, how, actor)
VALUES (%(link_id)s, %(user_id)s, %(action)s, %(kept)s, %(superseded)s::uuid[], %(how)s,
        %(actor)s)
RETURNING resolution_id, created_at;

-- name: contradictions_mark_link
UPDATE memory_links SET metadata = metadata || jsonb_build_object(
  'resolved', true, 'resolution_id', %(resolution_id)s::bigint)
WHERE id = %(link_id)s;

-- name: contradictions_resolution_of_memory
-- the resolutions that superseded a memory (what `why` shows for a loser)
SELECT r.resolution_id, r.link_id, r.action, r.kept_id, r.how, r.actor, r.created_at,
       k.content, k.status
FROM contradiction_resolutions r JOIN memories k ON k.memory_id = r.kept_id
WHERE %(memory_id)s::uuid = ANY(r.superseded)
ORDER BY r.resolution_id;
