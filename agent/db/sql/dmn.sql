-- The idle default-mode network (agent/services/background/dmn.py).

-- name: dmn_gut_signal
INSERT INTO gut_signals (delta_norm, delta, layers, action)
VALUES (%s, %s::vector, %s::jsonb, 'logged');

-- name: dmn_recent_user_turns
SELECT d.entry_id, d.session_id, d.user_id, d.content, d.created_at, d.universal_embedding::text, (SELECT p.universal_embedding::text
FROM day_table p WHERE p.session_id = d.session_id AND p.role = 'user'
  AND p.turn_number < d.turn_number ORDER BY p.turn_number DESC LIMIT 1) FROM day_table d
WHERE d.role = 'user' AND d.message_type = 'dialogue'
  AND d.created_at > greatest(%s::timestamptz, %s) ORDER BY d.created_at LIMIT 200;

-- name: dmn_thought_already_surfaced
-- the item surfaced (a thought's first source; the rest name the turn that triggered it)
-- in this session within the cooldown. Seed 002 §1's cooldown is per injection ("don't
-- inject the same connection twice in 10 minutes"), so a thought counts only when it was
-- shown ('injected', from when it was shown) or still waits for a prompt that will show it
-- ('new': in a session cogd answers, turn_take_thoughts takes it into the next prompt; in
-- a `claude:` session, `cogd hook` prints it with the next prompt; writing the item again
-- before then would show it twice). A thought that went nowhere ('expired', 'discarded',
-- ...) never holds it (issue 42 item 5)
SELECT 1 FROM thoughts t
WHERE t.kind = 'proactive_recall' AND t.source_ids @> %(sources)s::jsonb
  AND t.source_ids ->> 0 = %(item)s AND t.session_id IS NOT DISTINCT FROM %(session)s
  AND coalesce(t.injected_at, t.created_at) > %(since)s AND t.status IN ('injected', 'new');

-- name: dmn_thought_insert
INSERT INTO thoughts (kind, content, theme, source_ids, session_id, created_at, user_id)
VALUES (%s, %s, %s, %s::jsonb, %s, %s, %s) RETURNING thought_id;

-- name: dmn_session_entries
SELECT entry_id FROM day_table WHERE session_id = %s;

-- name: dmn_open_intentions
SELECT intention_id, kind, content, carried_count FROM intentions WHERE status = 'open'
  AND user_id IS NOT DISTINCT FROM %s ORDER BY urgency DESC, created_at LIMIT %s;

-- name: dmn_recent_turns_centroid
SELECT avg(universal_embedding)::text FROM (SELECT universal_embedding FROM day_table
WHERE universal_embedding IS NOT NULL ORDER BY created_at DESC LIMIT 10) t;

-- name: dmn_identity_values
SELECT name, description, weight FROM identity WHERE NOT is_boundary;

-- name: dmn_goal_values
-- installation-wide goals only: the DMN surfaces every user's memories, and a user's own
-- goal (revision 0019) must not meet another user's words in a thought
SELECT name, description, weight FROM goals WHERE status = 'active' AND user_id IS NULL;

-- name: dmn_theme_thought_count
SELECT count(*) FROM thoughts WHERE theme = %s;

-- name: dmn_pressure_waiting
SELECT exists(SELECT 1 FROM intentions WHERE status = 'open' AND carried_count >= %s)
  OR exists(SELECT 1 FROM inbox WHERE status = 'pending');

-- name: dmn_recent_memories_centroid
SELECT avg(universal_embedding)::text FROM (SELECT universal_embedding FROM memories
WHERE status = 'active' AND universal_embedding IS NOT NULL ORDER BY importance DESC LIMIT 50) t;

-- name: dmn_recently_recalled
SELECT 1 FROM recall_log r, jsonb_array_elements(r.items) e WHERE r.created_at > %s
  AND e->>'id' = %s AND e->>'verdict' <> 'no_match' LIMIT 1;

-- name: dmn_identity_texts
SELECT coalesce(nullif(description, ''), name), weight FROM identity WHERE NOT is_boundary;

-- name: dmn_goal_texts
-- installation-wide goals only (as dmn_goal_values)
SELECT coalesce(nullif(description, ''), name), weight FROM goals
WHERE status = 'active' AND user_id IS NULL;

-- name: dmn_surfaceable_memories
-- the most important active memories, each with its association to the attention vector
-- and its alignment with the gut's hope direction (0.0 without one), and its user
SELECT memory_id, content, importance, access_count, coalesce(last_accessed, created_at),
       coalesce(1 - (universal_embedding <=> %(attention)s::vector), 0.0),
       coalesce(1 - (universal_embedding <=> %(hope)s::vector), 0.0), user_id
FROM memories WHERE status = 'active'
ORDER BY importance DESC, created_at DESC
LIMIT 200;

-- name: dmn_user_turn
-- one live user turn (the TURN notification's entry), shaped as dmn_recent_user_turns
SELECT d.entry_id, d.session_id, d.user_id, d.content, d.created_at, d.universal_embedding::text, (SELECT p.universal_embedding::text
FROM day_table p WHERE p.session_id = d.session_id AND p.role = 'user'
  AND p.turn_number < d.turn_number ORDER BY p.turn_number DESC LIMIT 1) FROM day_table d
WHERE d.entry_id = %s AND d.role = 'user' AND d.message_type = 'dialogue' AND d.created_at > %s;

-- name: dmn_session_observations
-- the proactive recalls (seed 000 §6.3 "observations") one session has had: count, latest
SELECT count(*), max(created_at) FROM thoughts WHERE kind = 'proactive_recall'
  AND session_id = %s AND theme IN ('topic_shift', 'task_completion');

-- name: dmn_last_user_turn_at
SELECT max(created_at) FROM day_table WHERE role = 'user' AND message_type = 'dialogue';

-- name: dmn_last_internal_turn_at
SELECT max(created_at) FROM thoughts WHERE kind = 'internal_turn';

-- name: dmn_next_self_prompt
SELECT thought_id, content, theme, source_ids FROM thoughts
WHERE kind = 'self_prompt' AND status = 'new' AND created_at > %s
ORDER BY created_at DESC LIMIT 1;

-- name: dmn_thought_status
UPDATE thoughts SET status = %s WHERE thought_id = %s;

-- name: dmn_memory_owner
SELECT user_id FROM memories WHERE memory_id::text = %s;

-- name: dmn_goal_action
UPDATE goals SET actions = actions + 1 WHERE name = %s AND status = 'active';

-- name: dmn_goal_useful
UPDATE goals SET useful_actions = useful_actions + 1 WHERE name = %s;

-- name: dmn_recently_cited
SELECT 1 FROM memory_citations WHERE cited_id::text = %s AND valid AND created_at > %s LIMIT 1;

-- name: dmn_gut_outcomes
-- each signal older than the horizon gets its outcome (a named heuristic): the user turns
-- that followed within the horizon, their mean cosine similarity to the delta (attention
-- minus subconscious: > 0, the conversation went on where the gut pointed), the recalls
-- that found something and the valid citations in the same window
UPDATE gut_signals g SET outcome = o.outcome, outcome_at = %(now)s
FROM (SELECT s.id, jsonb_build_object(
    'detector', 'next-turns-heuristic', 'horizon_s', %(horizon_s)s,
    'turns', count(d.entry_id),
    'delta_alignment', round(avg(CASE WHEN s.delta_norm > 0
                                      THEN 1 - (d.universal_embedding <=> s.delta) END)::numeric, 4),
    'recalls_matched', (SELECT count(*) FROM recall_log r WHERE r.verdict <> 'no_match'
        AND r.created_at > s.created_at
        AND r.created_at <= s.created_at + make_interval(secs => %(horizon_s)s)),
    'citations', (SELECT count(*) FROM memory_citations c WHERE c.valid
        AND c.created_at > s.created_at
        AND c.created_at <= s.created_at + make_interval(secs => %(horizon_s)s))) AS outcome
  FROM gut_signals s LEFT JOIN day_table d ON d.role = 'user' AND d.message_type = 'dialogue'
    AND d.universal_embedding IS NOT NULL AND d.created_at > s.created_at
    AND d.created_at <= s.created_at + make_interval(secs => %(horizon_s)s)
  WHERE s.outcome IS NULL AND s.created_at < %(now)s - make_interval(secs => %(horizon_s)s)
  GROUP BY s.id ORDER BY s.id LIMIT 500) o
WHERE g.id = o.id RETURNING g.id;

-- name: double_take_candidates
-- epiphanies not shown yet, of this user or of no user, with their block's universal vector
SELECT t.thought_id, t.content, t.theme, t.source_ids, b.universal_embedding::text
FROM thoughts t LEFT JOIN holographic_blocks b ON t.theme = 'cortex:' || b.block_id::text
WHERE t.kind = 'epiphany' AND t.status = 'new'
  AND (t.user_id = %(user_id)s OR t.user_id IS NULL)
ORDER BY t.created_at DESC LIMIT 10;

-- name: double_take_shown
UPDATE thoughts SET status = 'injected', injected_at = now()
WHERE thought_id = ANY(%s) AND status = 'new' RETURNING thought_id, content;

-- name: dmn_gut_outcome_record
-- the gut's outcome record (seed 003 §17d): the newest outcome-tagged signals with a delta
-- (their deltas: dmn_gut_deltas, read once per signal and kept in memory)
SELECT id, outcome FROM gut_signals
WHERE outcome IS NOT NULL AND delta_norm > 0
ORDER BY created_at DESC, id DESC LIMIT %s;

-- name: dmn_gut_deltas
SELECT id, delta::text FROM gut_signals WHERE id = ANY(%s);

-- name: dmn_dormant_memories
-- dormant-memory recovery (seed 003 §Idle Loop): memories not recalled since %(before)s
-- (last_accessed, else when cogd wrote them), used fewer than %(max_access)s times, active
-- or archived by decay (never superseded), at least %(min_similarity)s similar to the
-- recent turns' centroid; the closest first. Shaped as dmn_surfaceable_memories
SELECT memory_id, content, importance, access_count, coalesce(last_accessed, written_at),
       1 - (universal_embedding <=> %(attention)s::vector),
       coalesce(1 - (universal_embedding <=> %(hope)s::vector), 0.0), user_id
FROM memories WHERE status IN ('active', 'archived') AND universal_embedding IS NOT NULL
  AND coalesce(last_accessed, written_at) < %(before)s AND access_count < %(max_access)s
  AND 1 - (universal_embedding <=> %(attention)s::vector) >= %(min_similarity)s
ORDER BY universal_embedding <=> %(attention)s::vector
LIMIT %(k)s;

-- name: dmn_recover_memory
-- a dormant memory recovered: importance back up to %(importance)s (never lowered), active
-- again, its decay clock restarted; the values before and after (for the audit row)
UPDATE memories m SET importance = greatest(m.importance, %(importance)s), status = 'active',
  last_accessed = %(now)s, updated_at = now(),
  metadata = m.metadata || jsonb_build_object('recovered_at', %(at)s::text)
FROM (SELECT memory_id, importance, status, last_accessed FROM memories
      WHERE memory_id = %(id)s FOR UPDATE) b
WHERE m.memory_id = b.memory_id
RETURNING b.importance, b.status, b.last_accessed, m.importance, m.status;

-- name: dmn_expire_thoughts
-- every thought reaches something or is gone (issue 42 item 7): an idle thought (internal
-- turn, creative impulse) or a proactive recall no prompt took by %(mind_before)s, a
-- self-prompt not acted on by %(prompt_before)s (act reads only newer ones): 'expired',
-- kept, never deleted
UPDATE thoughts SET status = 'expired'
WHERE status = 'new' AND (
  (kind IN ('internal_turn', 'creative_impulse', 'proactive_recall')
   AND created_at < %(mind_before)s)
  OR (kind = 'self_prompt' AND created_at < %(prompt_before)s))
RETURNING kind;
