-- Recall hot path, pasteable into psql (replace %(name)s with values).

-- name: recall_dense_day_table
-- Nearest day_table entries by universal embedding (HNSW, cosine).
SELECT entry_id, session_id, role, content, created_at,
       universal_embedding <=> %(query)s::vector AS distance
FROM day_table
WHERE universal_embedding IS NOT NULL
ORDER BY universal_embedding <=> %(query)s::vector
LIMIT %(k)s;
