"""The grounded-reply heuristic's glue (issue 40): the question's cosine to each sentence
of the user's own words among recall's items and the user's own nearest words, then
agent/domain/grounded.py decides."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from agent.domain.grounded import GroundedReply, grounded_reply, is_fact_question, said_sentences
from agent.domain.recall import RecallItem
from agent.providers.ports import Embedder


def from_memory(embedder: Embedder, question: str, items: Sequence[RecallItem],
                now: datetime | None = None, question_vector: Any = None,
                own_words: Sequence[RecallItem] = ()) -> GroundedReply | None:
    """The grounded reply to `question`, or None for the model to answer. `items`:
    recall's; `own_words`: the user's own words nearest the question (Recaller.own_words),
    judged after them (an item recall already holds is not judged twice). Embeds each
    distinct sentence once (one batch) only for a fact question; the question too unless
    its query vector is given (`question_vector`: the turn's, embedded once). A turn of
    `own_words` that is one sentence is not embedded again: its similarity is already the
    cosine of its stored verbatim vector to the question's (a memory's vector may carry
    its type's prefix: embedded again)."""
    if not is_fact_question(question):
        return None
    held = {i.id for i in items}
    pool = [*items, *(i for i in own_words if i.id not in held)]
    sentences = [s.sentence for s in said_sentences(pool)]
    sims: list[float] = []
    if sentences:
        by_text = {" ".join(i.content.split()): float(i.similarity) for i in own_words
                   if i.kind == "day_table" and i.similarity is not None}
        distinct = [s for s in dict.fromkeys(sentences) if s not in by_text]
        if distinct:
            q = np.asarray(embedder.embed_query(question) if question_vector is None
                           else question_vector, dtype=np.float32)
            docs = np.asarray(embedder.embed_documents(distinct), dtype=np.float32)
            # the embedder's vectors are unit length
            by_text.update(zip(distinct, (float(x) for x in docs @ q), strict=True))
        sims = [by_text[s] for s in sentences]
    return grounded_reply(question, pool, sims, now or datetime.now(UTC))
