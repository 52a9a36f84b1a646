-- The cortex adapter's writes to the hippocampus (agent/cortex/store.py).

-- name: cortex_heal_hippocampus
UPDATE holographic_blocks SET native_embedding = %s::halfvec, native_model = %s,
       last_accessed = %s, vector_history = vector_history || %s::jsonb
WHERE block_id = %s;
