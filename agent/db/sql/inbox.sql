-- The inbox/outbox protocol (agent/inbox.py; revision 0008): a message is queued once
-- (its idempotency key is unique), claimed under a lease by one loop at a time, answered
-- or failed while the claim is still that loop's, and its reply read once.

-- name: inbox_enqueue
INSERT INTO inbox (session_id, content, stream, idempotency_key)
VALUES (%(session_id)s, %(content)s, %(stream)s, %(key)s)
ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING id;

-- name: inbox_by_key
SELECT id FROM inbox WHERE idempotency_key = %(key)s;

-- name: inbox_claim
-- claimed_by ends in the claiming backend's pid: a row whose claimer's connection is
-- gone is taken over at once instead of when its lease runs out. A row claimed before
-- revision 0008 has no lease: its claim time plus one lease counts. The claim counts
-- itself in attempts (revision 0020) in this same statement, so a loop that dies or is
-- stuck mid-turn has used its attempt; the loop fails a row past its limit (agent/inbox.py).
UPDATE inbox SET status = 'processing', attempts = attempts + 1,
                 claimed_by = %(me)s || ' pid=' || pg_backend_pid(), claimed_at = now(),
                 lease_until = now() + make_interval(secs => %(lease)s)
WHERE id = (
    SELECT id FROM inbox
    WHERE status = 'pending'
       OR (status = 'processing' AND (
             coalesce(lease_until, claimed_at + make_interval(secs => %(lease)s)) < now()
             OR NOT EXISTS (
                 SELECT 1 FROM pg_stat_activity a
                 WHERE a.pid = substring(inbox.claimed_by FROM ' pid=([0-9]+)$')::int)))
    ORDER BY id
    FOR UPDATE SKIP LOCKED
    LIMIT 1)
RETURNING id, session_id, content, stream, claimed_by, attempts;

-- name: inbox_renew
UPDATE inbox SET lease_until = now() + make_interval(secs => %(lease)s)
WHERE id = %(id)s AND claimed_by = %(claim)s AND status = 'processing';

-- name: inbox_hold
-- inside the reply's transaction: locks the row until commit, or finds it taken over
SELECT 1 FROM inbox
WHERE id = %(id)s AND claimed_by = %(claim)s AND status = 'processing'
FOR UPDATE;

-- name: inbox_partial
UPDATE inbox SET partial_reply = %(text)s WHERE id = %(id)s;

-- name: inbox_done
UPDATE inbox SET status = 'done', processed_at = now() WHERE id = %(id)s;

-- name: inbox_failed
UPDATE inbox SET status = 'failed', error = %(error)s, processed_at = now()
WHERE id = %(id)s AND claimed_by = %(claim)s AND status = 'processing'
RETURNING id;

-- name: outbox_insert
INSERT INTO outbox (inbox_id, session_id, content, metadata)
VALUES (%(inbox_id)s, %(session_id)s, %(content)s, %(metadata)s::jsonb)
RETURNING id;

-- name: outbox_reply
SELECT id, content, metadata FROM outbox WHERE inbox_id = %(id)s ORDER BY id LIMIT 1;

-- name: outbox_delivered
UPDATE outbox SET delivered_at = now() WHERE id = %(id)s;

-- name: inbox_partial_reply
SELECT partial_reply FROM inbox WHERE id = %(id)s;
