"""The double take (seed 001 §9.8.2): an epiphany, shown once, in the next relevant turn.

Reconsolidation stores each epiphany as a thought of kind 'epiphany' (agent/cortex/store.py).
A turn takes its user's new ones that are relevant to it: the block is among the recalled
items, or the compound query's similarity to the block's text (the excerpt the thought
keeps; its own text without one) or to the block's universal vector is at least
`[idle] double_take_min_similarity`. Those are marked
'injected' (so each is shown once) and returned for `PromptParts.double_takes`.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

import numpy as np
import psycopg

from agent.db.queries import query
from agent.providers.ports import Embedder


def take(conn: psycopg.Connection[Any], universal: Embedder, user_id: Any, query_text: str,
         recalled_ids: Collection[str], min_similarity: float) -> list[tuple[str, str]]:
    """(thought id, text) of the epiphanies this turn shows; each is marked shown."""
    rows = conn.execute(query("double_take_candidates"), {"user_id": user_id}).fetchall()
    if not rows:
        return []
    q = np.asarray(universal.embed_query(query_text), dtype=np.float32)
    def excerpt(content: str, sources: Any) -> str:
        return next((s["excerpt"] for s in sources or [] if isinstance(s, dict)
                     and s.get("excerpt")), content)

    texts = np.asarray(universal.embed_documents([excerpt(r[1], r[3]) for r in rows]),
                       dtype=np.float32)
    picked = []
    for (tid, _content, theme, _sources, block), tvec in zip(rows, texts, strict=True):
        sims = [float(tvec @ q)]
        if block is not None:
            sims.append(float(np.asarray(json.loads(block), dtype=np.float32) @ q))
        if theme in recalled_ids or max(sims) >= min_similarity:
            picked.append(tid)
    if not picked:
        return []
    shown = conn.execute(query("double_take_shown"), (picked,)).fetchall()
    return [(str(r[0]), str(r[1])) for r in shown]
