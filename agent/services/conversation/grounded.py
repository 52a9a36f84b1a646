"""The grounded-reply heuristic's glue (issue 40): the question's cosine to each sentence
of the user's own words among recall's items, then agent/domain/grounded.py decides."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from agent.domain.grounded import GroundedReply, grounded_reply, is_fact_question, said_sentences
from agent.domain.recall import RecallItem
from agent.providers.ports import Embedder


def from_memory(embedder: Embedder, question: str, items: Sequence[RecallItem],
                now: datetime | None = None, question_vector: Any = None
                ) -> GroundedReply | None:
    """The grounded reply to `question`, or None for the model to answer. Embeds the
    sentences (one batch, a few ms) only for a fact question; the question too unless its
    query vector is given (`question_vector`: the turn's, embedded once)."""
    if not is_fact_question(question):
        return None
    sentences = [s.sentence for s in said_sentences(items)]
    sims: list[float] = []
    if sentences:
        q = np.asarray(embedder.embed_query(question) if question_vector is None
                       else question_vector, dtype=np.float32)
        docs = np.asarray(embedder.embed_documents(sentences), dtype=np.float32)
        sims = [float(x) for x in docs @ q]  # the embedder's vectors are unit length
    return grounded_reply(question, items, sims, now or datetime.now(UTC))
