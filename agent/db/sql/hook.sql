-- `cogd hook` (agent/services/access/hook.py): what a Claude Code prompt is enriched with

-- name: hook_recent_prompts
-- the compound query's buffer (seed 000 §5.4.2-5.4.3): the session's last user turns, as
-- `cogd watch` imported them from the transcript, newest first
SELECT content FROM day_table
WHERE session_id = %(session)s AND role = 'user' AND message_type = 'dialogue'
ORDER BY created_at DESC LIMIT %(k)s;

-- name: hook_on_cooldown
-- which of %(keys)s were shown in this session within the cooldown, or wait for this
-- prompt to show them: a proactive_recall thought whose first source is the key, 'injected'
-- since %(since)s or still 'new' (the same rule as dmn_thought_already_surfaced)
SELECT DISTINCT source_ids ->> 0 FROM thoughts
WHERE kind = 'proactive_recall' AND session_id = %(session)s
  AND source_ids ->> 0 = ANY(%(keys)s::text[])
  AND coalesce(injected_at, created_at) > %(since)s AND status IN ('injected', 'new');

-- name: hook_pending_thoughts
-- the idle DMN's thoughts for this session that no prompt has shown yet (task completion,
-- winding down: seed 002 §1, §4), the newest first
SELECT thought_id, content, theme, source_ids ->> 0 FROM thoughts
WHERE kind = 'proactive_recall' AND session_id = %(session)s AND status = 'new'
ORDER BY created_at DESC LIMIT %(k)s;

-- name: hook_shown_insert
-- what the hook printed, stored as shown at %(at)s: what its cooldown reads next time
INSERT INTO thoughts (kind, content, theme, source_ids, session_id, created_at, user_id,
                      status, injected_at)
SELECT 'proactive_recall', c, 'prompt_submit', s::jsonb, %(session)s, %(at)s, %(user)s,
       'injected', %(at)s
FROM unnest(%(contents)s::text[], %(sources)s::text[]) AS t(c, s);

-- name: hook_thoughts_shown
-- the DMN's pending thoughts the hook printed
UPDATE thoughts SET status = 'injected', injected_at = %(at)s
WHERE thought_id = ANY(%(ids)s::uuid[]) AND status = 'new';
