-- The problem queue and the night's thinking phase (seed 000 §9.5, §9.6; issue 18):
-- agent/services/thinking/problems.py and night_cycle/stages/thinking.py. Every fill is keyed by
-- source_key (unique): a re-run of the same night adds nothing twice.

-- name: problems_fill_open_questions
-- no-match-question heuristic: a user turn with a '?' whose recall found nothing
INSERT INTO problem_queue (user_id, kind, content, source_ids, source_key)
SELECT DISTINCT ON (d.entry_id) d.user_id, 'open_question', d.content,
       jsonb_build_array('day_table:' || d.entry_id::text, 'recall_log:' || r.id::text),
       'open_question:' || d.entry_id::text
FROM recall_log r JOIN day_table d ON d.entry_id = r.entry_id
WHERE r.verdict = 'no_match' AND d.role = 'user' AND d.user_id IS NOT NULL
  AND strpos(d.content, '?') > 0
  AND r.created_at >= %(since)s AND r.created_at < %(cutoff)s
ORDER BY d.entry_id, r.id
ON CONFLICT (source_key) DO NOTHING RETURNING problem_id;

-- name: problems_fill_contradictions
-- two active memories of one user linked 'contradicts' (either direction: one problem)
INSERT INTO problem_queue (user_id, kind, content, source_ids, source_key)
SELECT DISTINCT ON (k.key) k.user_id, 'contradiction',
       '"' || k.a_text || '" contradicts "' || k.b_text || '"',
       jsonb_build_array('memory:' || k.a::text, 'memory:' || k.b::text), k.key
FROM (SELECT a.user_id, least(a.memory_id, b.memory_id) AS a,
             greatest(a.memory_id, b.memory_id) AS b,
             CASE WHEN a.memory_id < b.memory_id THEN a.content ELSE b.content END AS a_text,
             CASE WHEN a.memory_id < b.memory_id THEN b.content ELSE a.content END AS b_text,
             'contradiction:' || least(a.memory_id, b.memory_id)::text || ':'
                 || greatest(a.memory_id, b.memory_id)::text AS key
      FROM memory_links l
      JOIN memories a ON a.memory_id = l.source_id
      JOIN memories b ON b.memory_id = l.target_id
      WHERE l.link_type = 'contradicts' AND a.status = 'active' AND b.status = 'active'
        AND a.user_id IS NOT DISTINCT FROM b.user_id AND a.created_at < %(cutoff)s
        AND b.created_at < %(cutoff)s) k
ORDER BY k.key
ON CONFLICT (source_key) DO NOTHING RETURNING problem_id;

-- name: problems_fill_failed_predictions
INSERT INTO problem_queue (user_id, kind, content, source_ids, source_key)
SELECT p.user_id, 'failed_prediction',
       'The prediction "' || p.statement || '" (confidence ' || round(p.confidence::numeric, 2)
           || ') was wrong' || coalesce(': ' || (p.settlement->>'lesson'), '.'),
       jsonb_build_array('prediction:' || p.prediction_id::text)
           || CASE WHEN p.settled_by_entry_id IS NULL THEN '[]'::jsonb
                   ELSE jsonb_build_array('day_table:' || p.settled_by_entry_id::text) END,
       'failed_prediction:' || p.prediction_id::text
FROM predictions p
WHERE p.status = 'wrong' AND p.settled_at < %(cutoff)s
ORDER BY p.settled_at
ON CONFLICT (source_key) DO NOTHING RETURNING problem_id;

-- name: problems_add
INSERT INTO problem_queue (user_id, kind, content, source_ids, source_key)
VALUES (%(user)s, 'user_submitted', %(content)s, '[]'::jsonb, %(key)s)
ON CONFLICT (source_key) DO NOTHING RETURNING problem_id;

-- name: problems_by_key
SELECT problem_id, status FROM problem_queue WHERE source_key = %s;

-- name: problems_list
SELECT q.problem_id, q.kind, q.status, q.content, q.source_ids, q.attempts, q.last_run_id,
       q.result_thought_id, t.content, t.confidence, q.created_at, q.updated_at
FROM problem_queue q LEFT JOIN thoughts t ON t.thought_id = q.result_thought_id
WHERE q.user_id = %(user)s AND (%(all)s OR q.status IN ('open', 'worked'))
ORDER BY q.status = 'open' DESC, q.created_at DESC, q.problem_id LIMIT %(k)s;

-- name: problems_open
SELECT problem_id, user_id, kind, content, source_ids FROM problem_queue
WHERE status = 'open' ORDER BY created_at, problem_id LIMIT %s;

-- name: problems_worked_in_run
SELECT count(*) FROM problem_queue WHERE last_run_id = %s AND status = 'worked';

-- name: problems_mark_worked
UPDATE problem_queue SET status = 'worked', attempts = attempts + 1, last_run_id = %(run)s,
       result_thought_id = %(thought)s, updated_at = now()
WHERE problem_id = %(problem)s AND status = 'open';

-- name: overnight_thought_insert
-- the id is derived from what the thought is about: written once, whatever the re-runs
INSERT INTO thoughts (thought_id, kind, content, theme, source_ids, user_id, confidence)
VALUES (%(id)s, %(kind)s, %(content)s, %(theme)s, %(sources)s::jsonb, %(user)s,
        %(confidence)s)
ON CONFLICT (thought_id) DO NOTHING;

-- name: overnight_thoughts_existing
SELECT thought_id::text FROM thoughts WHERE thought_id = ANY(%s::uuid[]);

-- name: overnight_thoughts_of_run
SELECT t.kind, t.content, t.confidence, u.handle, t.thought_id::text FROM thoughts t
LEFT JOIN users u ON u.user_id = t.user_id
WHERE t.theme = %s AND t.kind IN ('overnight', 'creative_drift')
ORDER BY t.kind DESC, t.confidence DESC NULLS LAST, t.created_at LIMIT 20;
