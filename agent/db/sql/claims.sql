-- Claim slots (agent/services/memory/claims.py, revision 0022): a memory's claim on a slot of
-- its subject; a newer claim retires the older one, which is kept and linked.

-- name: claims_memory
-- the memory a claim is read from: its user, words, event time, and its turn's speaker
SELECT m.memory_id, m.user_id, m.content, m.created_at, coalesce(d.speaker, m.source_speaker),
       coalesce(d.role, m.source_role)
FROM memories m LEFT JOIN day_table d ON d.entry_id = m.source_entry_id
WHERE m.memory_id = %s;

-- name: claims_slot_lock
-- one writer per slot at a time (the partial unique index refuses a second current claim;
-- this makes the second writer wait and see the first one's claim instead)
SELECT pg_advisory_xact_lock(hashtextextended('claims/' || %(user_id)s::text || '/'
                                             || %(subject)s || '/' || %(slot)s, 0));

-- name: claims_slot_history
-- a slot's claims, oldest first
SELECT claim_id, memory_id, value, status, valid_from, retired_at, retired_by
FROM claims WHERE user_id = %(user_id)s AND subject = %(subject)s AND slot = %(slot)s
ORDER BY valid_from, created_at, claim_id;

-- name: claims_insert
INSERT INTO claims (user_id, memory_id, subject, slot, value, status, valid_from, retired_at,
                    retired_by, detector)
VALUES (%(user_id)s, %(memory_id)s, %(subject)s, %(slot)s, %(value)s, %(status)s,
        %(valid_from)s, %(retired_at)s, %(retired_by)s, %(detector)s)
ON CONFLICT (memory_id, slot) DO NOTHING
RETURNING claim_id;

-- name: claims_retire
-- a claim retired (or re-linked, when a back-dated claim comes between two) by a newer one
UPDATE claims SET status = 'retired', retired_at = %(at)s, retired_by = %(by)s
WHERE claim_id = %(claim_id)s;

-- name: claims_of_candidates
-- the claims of recall's candidates: of the memories by id, of the turns through the
-- memories made from them; `replaced`: a current claim that retired an earlier one. Read
-- by key (uq_claims_memory_slot, ux_memories_source_entry_type, ix_claims_retired_by) for
-- each candidate: the cost does not grow with the claims table
WITH c AS (SELECT 'memory:' || c.memory_id::text AS key, c.memory_id, c.subject, c.slot,
                  c.status, c.valid_from, c.retired_at
           FROM unnest(%(memories)s::uuid[]) AS x(id) JOIN claims c ON c.memory_id = x.id
           UNION ALL
           SELECT 'day_table:' || m.source_entry_id::text, c.memory_id, c.subject, c.slot,
                  c.status, c.valid_from, c.retired_at
           FROM unnest(%(turns)s::uuid[]) AS x(id)
           JOIN memories m ON m.source_entry_id = x.id
           JOIN claims c ON c.memory_id = m.memory_id)
SELECT c.key, c.status, c.valid_from, c.retired_at,
       c.status = 'current' AND (SELECT true FROM claims r WHERE r.retired_by = c.memory_id
                                 AND r.slot = c.slot AND r.subject = c.subject
                                 LIMIT 1) IS NOT NULL AS replaced
FROM c;

-- name: claims_history
-- every claim of the slots a memory claims, oldest first, with each claim's memory
SELECT c.slot, c.subject, c.value, c.status, c.valid_from, c.retired_at, c.retired_by,
       c.memory_id, m.content, c.detector, c.memory_id = %(memory_id)s AS is_this
FROM claims c JOIN memories m ON m.memory_id = c.memory_id
WHERE (c.user_id, c.subject, c.slot) IN (SELECT user_id, subject, slot FROM claims
                                         WHERE memory_id = %(memory_id)s)
ORDER BY c.slot, c.valid_from, c.created_at, c.claim_id;

-- name: claims_restore
-- after a forget: a slot whose current claim was forgotten gets back the claim it had
-- retired (its retired_by is NULL now: ON DELETE SET NULL), when no newer claim holds
UPDATE claims c SET status = 'current', retired_at = NULL
WHERE c.status = 'retired' AND c.retired_by IS NULL
  AND c.user_id IS NOT DISTINCT FROM %(uid)s::uuid
  AND NOT EXISTS (SELECT 1 FROM claims o WHERE o.user_id = c.user_id
                  AND o.subject = c.subject AND o.slot = c.slot
                  AND (o.status = 'current' OR o.valid_from > c.valid_from))
RETURNING claim_id;
