"""The double take (seed 001 §9.8.2): an epiphany, shown once, in the next relevant turn.

Reconsolidation stores each epiphany as a thought of kind 'epiphany' (agent/cortex/store.py).
A turn takes its user's new ones that are relevant to it: the block is among the recalled
items, or the compound query's similarity to the block's text (the excerpt the thought
keeps; its own text without one) or to the block's universal vector is at least
`[idle] double_take_min_similarity`. Those are marked
'injected' (so each is shown once) and returned for `PromptParts.double_takes`.

The hot path: an epiphany waits, unseen, until a relevant turn comes, and every turn of
its user checks it; the excerpts' vectors are kept in this process (the last
EXCERPTS_KEPT), so a waiting epiphany's text is embedded once, not on every turn.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import psycopg

from agent.db.queries import query
from agent.providers.ports import Embedder

EXCERPTS_KEPT = 256  # cogd choice: more than a user's waiting epiphanies (10 read per turn)
_excerpts: OrderedDict[tuple[str, str], np.ndarray[Any, Any]] = OrderedDict()
_lock = threading.Lock()


def _excerpt_vectors(universal: Embedder, texts: Sequence[str]) -> np.ndarray[Any, Any]:
    """The excerpts' universal vectors, embedding only those not kept yet."""
    model = universal.model_id
    with _lock:
        kept = {t: _excerpts[(model, t)] for t in texts if (model, t) in _excerpts}
    missing = [t for t in dict.fromkeys(texts) if t not in kept]
    if missing:
        vectors = np.asarray(universal.embed_documents(missing), dtype=np.float32)
        kept.update(zip(missing, vectors, strict=True))
    with _lock:
        for text in texts:
            _excerpts[(model, text)] = kept[text]
            _excerpts.move_to_end((model, text))
        while len(_excerpts) > EXCERPTS_KEPT:
            _excerpts.popitem(last=False)
    return np.asarray([kept[t] for t in texts], dtype=np.float32)


def take(conn: psycopg.Connection[Any], universal: Embedder, user_id: Any, query_text: str,
         recalled_ids: Collection[str], min_similarity: float, query_vector: Any = None
         ) -> list[tuple[str, str]]:
    """(thought id, text) of the epiphanies this turn shows; each is marked shown.
    `query_vector`: the query's vector when the caller has it (the loop's turn), else
    `query_text` is embedded."""
    rows = conn.execute(query("double_take_candidates"), {"user_id": user_id}).fetchall()
    if not rows:
        return []
    q = np.asarray(universal.embed_query(query_text) if query_vector is None
                   else query_vector, dtype=np.float32)
    def excerpt(content: str, sources: Any) -> str:
        return next((s["excerpt"] for s in sources or [] if isinstance(s, dict)
                     and s.get("excerpt")), content)

    texts = _excerpt_vectors(universal, [excerpt(r[1], r[3]) for r in rows])
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
