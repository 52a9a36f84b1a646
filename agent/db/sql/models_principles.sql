-- Cognitive models and principles (seed 000 §10.2, §10.4, §10.7):
-- agent/services/thinking/models_principles.py, run by consolidation; the prompt's principles.

-- name: models_build_candidates
-- the newest active memories (oldest first after the caller reverses them) that are no
-- model's evidence yet; corrections feed principles, not models
SELECT m.memory_id, m.content, m.universal_embedding::text, m.user_id, m.memory_type,
       m.created_at
FROM memories m
WHERE m.status = 'active' AND m.universal_embedding IS NOT NULL
  AND m.memory_type NOT IN ('correction', 'intention')
  AND NOT EXISTS (SELECT 1 FROM model_evidence e WHERE e.memory_id = m.memory_id)
ORDER BY m.created_at DESC LIMIT %(k)s;

-- name: models_nearest
-- the closest model of a user (any status but superseded) to a vector
SELECT model_id, 1 - (universal_embedding <=> %(v)s::vector)
FROM cognitive_models
WHERE user_id IS NOT DISTINCT FROM %(user)s AND status <> 'superseded'
  AND universal_embedding IS NOT NULL
ORDER BY universal_embedding <=> %(v)s::vector LIMIT 1;

-- name: models_insert
INSERT INTO cognitive_models (user_id, statement, domain, confidence, universal_embedding,
                              detector, last_checked_at)
VALUES (%(user)s, %(statement)s, %(domain)s, %(confidence)s, %(v)s::vector, %(detector)s,
        %(now)s)
RETURNING model_id;

-- name: models_evidence_insert
INSERT INTO model_evidence (model_id, memory_id, direction, note, confidence_before,
                            confidence_after, detector)
VALUES (%(model)s, %(memory)s, %(direction)s, %(note)s, %(before)s, %(after)s, %(detector)s)
ON CONFLICT (model_id, memory_id) WHERE memory_id IS NOT NULL DO NOTHING
RETURNING id;

-- name: models_to_check
-- the models looked at longest ago (updated_at: weighed, decayed, or found nothing new):
-- a model with nothing new goes to the back, so every model gets its turn
SELECT model_id, user_id, statement, domain, confidence, status,
       universal_embedding::text
FROM cognitive_models WHERE status IN ('active', 'weakened')
  AND universal_embedding IS NOT NULL
ORDER BY updated_at, created_at LIMIT %(k)s;

-- name: models_looked_at
-- weighed and nothing new found: last_checked_at (the last evidence, what decay reads)
-- stays
UPDATE cognitive_models SET updated_at = now() WHERE model_id = %s;

-- name: models_evidence_candidates
-- memories of the model's user (%(user)s: its user_id, passed so that the (user_id,
-- status) index narrows them) close to it that are not its evidence yet (oldest first),
-- and whether consolidation linked one as contradicting a memory that supports the model
SELECT m.memory_id, m.content, 1 - (m.universal_embedding <=> c.universal_embedding),
       EXISTS (SELECT 1 FROM memory_links l JOIN model_evidence s
                 ON s.model_id = c.model_id AND s.direction = 'supports'
               WHERE l.link_type = 'contradicts'
                 AND ((l.source_id = m.memory_id AND l.target_id = s.memory_id)
                      OR (l.target_id = m.memory_id AND l.source_id = s.memory_id)))
FROM cognitive_models c
JOIN memories m ON (m.user_id = %(user)s OR (%(user)s::uuid IS NULL AND m.user_id IS NULL))
WHERE c.model_id = %(model)s AND m.status = 'active' AND m.universal_embedding IS NOT NULL
  AND m.memory_type NOT IN ('correction', 'intention')
  AND 1 - (m.universal_embedding <=> c.universal_embedding) >= %(min)s
  AND NOT EXISTS (SELECT 1 FROM model_evidence e
                  WHERE e.model_id = c.model_id AND e.memory_id = m.memory_id)
ORDER BY m.created_at LIMIT 50;

-- name: models_update
UPDATE cognitive_models
SET confidence = %(confidence)s, status = %(status)s, check_count = check_count + %(checks)s,
    strengthen_count = strengthen_count + %(up)s, weaken_count = weaken_count + %(down)s,
    last_checked_at = %(now)s, updated_at = now()
WHERE model_id = %(model)s;

-- name: models_decay_candidates
SELECT model_id, confidence, domain, status, coalesce(last_checked_at, created_at)
FROM cognitive_models WHERE status IN ('active', 'weakened')
  AND coalesce(last_checked_at, created_at) < %(now)s - make_interval(days => %(days)s);

-- name: models_decay
-- decay leaves last_checked_at alone: an unchecked model keeps decaying, once per run
UPDATE cognitive_models SET confidence = %(confidence)s, status = %(status)s,
    updated_at = now()
WHERE model_id = %(model)s;

-- name: models_list
SELECT m.model_id, m.domain, m.status, m.confidence, m.check_count, m.strengthen_count,
       m.weaken_count, m.statement, m.detector,
       (SELECT count(*) FROM model_evidence e WHERE e.model_id = m.model_id),
       m.last_checked_at, m.created_at
FROM cognitive_models m JOIN users u ON u.user_id = m.user_id
WHERE u.handle = %(user)s ORDER BY m.status, m.confidence DESC, m.created_at;

-- name: principles_source_items
-- what principles crystallise from: active corrections, and cognitive models at or above
-- the confidence given; id as 'memory:<id>' / 'model:<id>', oldest first
SELECT 'memory:' || memory_id::text, user_id, content, universal_embedding::text, created_at
FROM memories
WHERE memory_type = 'correction' AND status = 'active' AND universal_embedding IS NOT NULL
UNION ALL
SELECT 'model:' || model_id::text, user_id, statement, universal_embedding::text, created_at
FROM cognitive_models
WHERE status = 'active' AND confidence >= %(min)s AND universal_embedding IS NOT NULL
ORDER BY 5, 1;

-- name: principles_all
-- every principle: a retired one (its proposal rejected) is neither confirmed nor
-- challenged, but its sources stay used (they do not crystallise it again)
SELECT principle_id, user_id, statement, confidence, status, source_ids,
       universal_embedding::text
FROM principles WHERE universal_embedding IS NOT NULL
ORDER BY created_at;

-- name: principles_insert
INSERT INTO principles (user_id, statement, confidence, status, source_ids,
                        universal_embedding, detector)
VALUES (%(user)s, %(statement)s, %(confidence)s, %(status)s, %(sources)s::jsonb,
        %(v)s::vector, %(detector)s)
RETURNING principle_id;

-- name: principles_set_proposal
UPDATE principles SET proposal_id = %(proposal)s, updated_at = now()
WHERE principle_id = %(principle)s;

-- name: principles_proposal_insert
-- a Layer 0 value proposal for an identity-changing principle (as consolidation's
-- promotion makes them: cogd_layer0_approve writes name/description/weight into identity)
INSERT INTO proposals (target_layer, kind, payload, evidence)
VALUES (0, 'new_value', %(payload)s::jsonb, %(evidence)s::jsonb)
RETURNING proposal_id;

-- name: principles_update
UPDATE principles
SET confidence = %(confidence)s, status = %(status)s, source_ids = %(sources)s::jsonb,
    confirm_count = confirm_count + %(confirms)s,
    challenge_count = challenge_count + %(challenges)s, updated_at = now()
WHERE principle_id = %(principle)s;

-- name: principles_decided
-- proposed principles whose proposal was decided: approved -> active, rejected -> retired
UPDATE principles p
SET status = CASE q.status WHEN 'approved' THEN 'active' ELSE 'retired' END,
    updated_at = now()
FROM proposals q
WHERE q.proposal_id = p.proposal_id AND p.status = 'proposed' AND q.status <> 'pending'
RETURNING p.principle_id, p.status;

-- name: principles_new_memories
-- memories written after the watermark, the last one read (created_at, memory_id), oldest
-- first: what may challenge a principle, with the sources they were linked as
-- contradicting by consolidation
SELECT m.memory_id, m.user_id, m.content, m.universal_embedding::text, m.created_at,
       coalesce((SELECT jsonb_agg(CASE WHEN l.source_id = m.memory_id
                                       THEN l.target_id ELSE l.source_id END::text)
                 FROM memory_links l
                 WHERE l.link_type = 'contradicts'
                   AND (l.source_id = m.memory_id OR l.target_id = m.memory_id)), '[]')
FROM memories m
WHERE m.status = 'active' AND m.universal_embedding IS NOT NULL
  -- Postgres derives `created_at >= since` from the row comparison for ix_memories_created_at
  AND (m.created_at, m.memory_id) > (%(since)s::timestamptz, %(since_id)s::uuid)
ORDER BY m.created_at, m.memory_id LIMIT %(k)s;

-- name: principles_matching
-- the principles of a user (or of no user) that apply: active, or proposed and approved;
-- with their cosine to the query vector
SELECT p.principle_id, p.statement, p.confidence, jsonb_array_length(p.source_ids),
       1 - (p.universal_embedding <=> %(q)s::vector) AS similarity
FROM principles p LEFT JOIN proposals q ON q.proposal_id = p.proposal_id
WHERE p.universal_embedding IS NOT NULL
  AND (p.user_id IS NULL OR p.user_id = %(user)s)
  AND (p.status = 'active' OR (p.status = 'proposed' AND q.status = 'approved'))
  AND 1 - (p.universal_embedding <=> %(q)s::vector) >= %(min)s
ORDER BY similarity DESC LIMIT %(k)s;

-- name: principles_list
SELECT p.principle_id, p.status, p.confidence, p.confirm_count, p.challenge_count,
       p.statement, p.source_ids, p.proposal_id, p.detector, p.created_at, p.updated_at
FROM principles p JOIN users u ON u.user_id = p.user_id
WHERE u.handle = %(user)s ORDER BY p.status, p.confidence DESC, p.created_at;
