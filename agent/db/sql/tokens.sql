-- Bearer tokens of the HTTP API (agent/services/access/tokens.py, revision 0013).

-- name: tokens_insert
INSERT INTO api_tokens (user_id, name, prefix, token_hash, operator)
VALUES (%s, %s, %s, %s, %s)
RETURNING token_id, created_at;

-- name: tokens_authenticate
-- a live token's user and whether it is an operator token (revision 0021); marks it
-- used (one row, by its unique hash)
UPDATE api_tokens t SET last_used_at = now()
FROM users u
WHERE t.token_hash = %s AND t.revoked_at IS NULL AND u.user_id = t.user_id
RETURNING t.token_id, t.user_id, u.handle, t.operator;

-- name: tokens_list
SELECT t.token_id, u.handle, t.name, t.prefix, t.created_at, t.last_used_at, t.revoked_at,
       t.operator
FROM api_tokens t JOIN users u USING (user_id)
WHERE %(handle)s::text IS NULL OR u.handle = %(handle)s::text
ORDER BY t.created_at;

-- name: tokens_find
-- a token by its id (uuid text) or by the start of the token (at least its prefix)
SELECT t.token_id, u.handle, t.prefix, t.revoked_at FROM api_tokens t JOIN users u USING (user_id)
WHERE t.token_id::text = %(ref)s OR (length(%(ref)s) >= length(t.prefix)
                                     AND left(%(ref)s, length(t.prefix)) = t.prefix);

-- name: tokens_revoke
UPDATE api_tokens SET revoked_at = now() WHERE token_id = %s AND revoked_at IS NULL
RETURNING token_id;
