-- What one turn of the cognitive loop reads and writes beside day_table and the inbox
-- (agent/services/conversation/cognition.py).

-- name: turn_session_user
SELECT s.user_id, u.tier FROM sessions s JOIN users u USING (user_id)
WHERE s.session_id = %(session_id)s;

-- name: turn_recent_injected
-- what recall injected in the session's last turns (not repeated)
SELECT items FROM recall_log WHERE session_id = %(session_id)s ORDER BY id DESC LIMIT %(k)s;

-- name: turn_take_thoughts
-- "recalled without being asked" (written by the idle DMN): at most 3, shown once. A
-- thought with no session goes only to its own user (or, with no user, only to turns with
-- no user): it holds recalled words, and must not reach another user (issue 38)
UPDATE thoughts SET status = 'injected', injected_at = now()
WHERE thought_id IN (
    SELECT thought_id FROM thoughts
    WHERE status = 'new' AND kind = 'proactive_recall'
      AND (session_id = %(session_id)s
           OR (session_id IS NULL AND user_id IS NOT DISTINCT FROM %(user_id)s))
    ORDER BY created_at DESC LIMIT 3)
RETURNING content;

-- name: turn_citation
INSERT INTO memory_citations (entry_id, cited_id, cited_kind, valid)
VALUES (%(entry_id)s, %(cited_id)s, %(kind)s, %(valid)s) ON CONFLICT DO NOTHING;

-- name: turn_escalation
INSERT INTO escalations (entry_id, session_id, triggers, stakes, monitors, loops, outcome)
VALUES (%(entry_id)s, %(session_id)s, %(triggers)s::jsonb, %(stakes)s::jsonb,
        %(monitors)s::jsonb, %(loops)s, %(outcome)s);

-- name: turn_on_my_mind_take
-- the idle DMN's own thoughts for this user not shown yet (issue 42 item 7): internal turns
-- and creative impulses, the newest %(k)s, taken (marked shown) in one statement. A thought
-- with no user goes only to turns with no user (its material may be any user's, as
-- turn_take_thoughts). Locked, so two turns of one user do not both take it
UPDATE thoughts SET status = 'injected', injected_at = now()
WHERE thought_id IN (
    SELECT thought_id FROM thoughts
    WHERE status = 'new' AND kind IN ('internal_turn', 'creative_impulse')
      AND session_id IS NULL AND user_id IS NOT DISTINCT FROM %(user_id)s
    ORDER BY created_at DESC LIMIT %(k)s
    FOR UPDATE SKIP LOCKED)
RETURNING thought_id, kind, content, created_at;

-- name: turn_on_my_mind_put_back
-- a thought taken that the prompt's budget left out waits for the next turn
UPDATE thoughts SET status = 'new', injected_at = NULL
WHERE thought_id = ANY(%(ids)s::uuid[]) AND status = 'injected';
