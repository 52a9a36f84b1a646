-- The user profile (agent/services/memory/profile.py; revision 0024).

-- name: profile_turns_since
-- the users' own words written after the watermark (created_at, entry_id), oldest first:
-- user turns of a user, dialogue, spoken by no one else (no speaker, or the user's handle)
SELECT d.entry_id, d.user_id, d.content, d.created_at
FROM day_table d JOIN users u ON u.user_id = d.user_id
WHERE d.role = 'user' AND d.message_type = 'dialogue'
  AND (d.speaker IS NULL OR lower(d.speaker) IN (lower(u.handle), 'user'))
  AND (d.created_at, d.entry_id) > (%(after)s, %(after_id)s::uuid)
ORDER BY d.created_at, d.entry_id LIMIT %(k)s;

-- name: profile_turns_of_user
-- every own word of one user still in day_table, oldest first (`cogd profile --rebuild`)
SELECT d.entry_id, d.user_id, d.content, d.created_at
FROM day_table d JOIN users u ON u.user_id = d.user_id
WHERE d.user_id = %(user)s AND d.role = 'user' AND d.message_type = 'dialogue'
  AND (d.speaker IS NULL OR lower(d.speaker) IN (lower(u.handle), 'user'))
ORDER BY d.created_at, d.entry_id;

-- name: profile_slot_lock
SELECT pg_advisory_xact_lock(hashtextextended('profile:' || %(user)s::text || ':' || %(slot)s, 0));

-- name: profile_slot_current
SELECT claim_id, value, said_at, source_entry_id FROM profile_claims
WHERE user_id = %(user)s AND slot = %(slot)s AND status = 'current';

-- name: profile_turn_claimed
SELECT 1 FROM profile_claims WHERE source_entry_id = %(entry)s AND slot = %(slot)s;

-- name: profile_retire
UPDATE profile_claims SET status = 'retired', retired_at = %(at)s, retired_by = %(by)s
WHERE claim_id = %(claim)s;

-- name: profile_insert
INSERT INTO profile_claims (claim_id, user_id, kind, slot, value, source_entry_id, said_at, status,
                            retired_at, retired_by, detector)
VALUES (%(claim_id)s, %(user)s, %(kind)s, %(slot)s, %(value)s, %(entry)s, %(at)s, %(status)s,
        %(retired_at)s, %(retired_by)s, %(detector)s)
ON CONFLICT (source_entry_id, slot) DO NOTHING
RETURNING claim_id;

-- name: profile_current
-- one user's current claims, each with the value it superseded (if any)
SELECT p.claim_id, p.kind, p.slot, p.value, p.said_at, p.source_entry_id, p.detector,
       (SELECT o.value FROM profile_claims o WHERE o.retired_by = p.claim_id
        ORDER BY o.said_at DESC LIMIT 1)
FROM profile_claims p
WHERE p.user_id = %(user)s AND p.status = 'current'
ORDER BY p.kind, p.said_at DESC;

-- name: profile_retired
-- one user's superseded claims, newest first (`cogd profile --json`: the history)
SELECT p.claim_id, p.kind, p.slot, p.value, p.said_at, p.source_entry_id, p.detector,
       p.retired_at, p.retired_by
FROM profile_claims p
WHERE p.user_id = %(user)s AND p.status = 'retired'
ORDER BY p.slot, p.said_at DESC;
