-- The cortex adapter's writes to the hippocampus (agent/cortex/store.py).

-- name: cortex_heal_hippocampus
UPDATE holographic_blocks SET native_embedding = %s::halfvec, native_model = %s,
       last_accessed = %s, vector_history = vector_history || %s::jsonb
WHERE block_id = %s;

-- name: cortex_epiphany_thought
-- the double take waiting for the next relevant turn of the block's owner (seed 001 §9.8.2)
INSERT INTO thoughts (kind, content, theme, source_ids, user_id, status)
VALUES ('epiphany', %s, %s, %s::jsonb, %s, 'new');
