-- audit_log (revision 0009: a hash chain over its rows; agent/db/audit.py).

-- name: audit_append
INSERT INTO audit_log (actor, action, target, details)
VALUES (%(actor)s, %(action)s, %(target)s, %(details)s::jsonb);

-- name: audit_chain
-- recomputes revision 0009's chain with its own hash function (cogd_audit_row_hash)
SELECT id, prev_hash, row_hash, lag(row_hash) OVER w AS before,
       cogd_audit_row_hash(lag(row_hash) OVER w, a) AS expected
FROM audit_log a WINDOW w AS (ORDER BY id) ORDER BY id;
