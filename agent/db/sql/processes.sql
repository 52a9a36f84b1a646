-- process_heartbeats and the advisory locks of singleton processes (agent/heartbeat.py, agent/db/locks.py), and llm_calls (agent/db/llm_calls.py).

-- name: heartbeat_prune
DELETE FROM process_heartbeats WHERE last_beat < now() - make_interval(secs => %s);

-- name: heartbeat_beat
UPDATE process_heartbeats SET last_beat = now(), state = %s, info = coalesce(%s::jsonb, info)
WHERE id = %s;

-- name: heartbeat_stopped
UPDATE process_heartbeats SET last_beat = now(), state = 'stopped' WHERE id = %s;

-- name: heartbeat_register
INSERT INTO process_heartbeats (name, pid, host, state)
            VALUES (%s, %s, %s, %s)
            ON CONFLICT (host, pid, name) DO UPDATE
               SET started_at = now(), last_beat = now(), state = EXCLUDED.state
            RETURNING id;

-- name: lock_try
SELECT pg_try_advisory_lock(%s);

-- name: lock_release
SELECT pg_advisory_unlock(%s);

-- name: lock_holder
SELECT pid, host, started_at FROM process_heartbeats
WHERE name = %s AND state <> 'stopped' ORDER BY last_beat DESC LIMIT 1;

-- name: llm_calls_insert
INSERT INTO llm_calls (provider, model, role, kind, tokens_in, tokens_out, latency_ms, ok,
                       error, attempts)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s);
