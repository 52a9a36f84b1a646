"""Corrections in the prompt (seed 000 §5.4.1, §7): on every turn whose compound query
matches a correction (a memories row of memory_type 'correction', of this user or of no
user), the correction is shown with when it fails and when it is fine.

A correction applies when the query's vector is closer than [context]
correction_min_similarity (cosine, universal vectors; seed 000 §5.4.1's 0.35), or, by the
word-overlap heuristic, when the query shares [context] correction_min_shared_words
content words with its fails_when (parsed by consolidation's regex heuristic).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from agent.db.queries import query, vector_text
from agent.domain import handoff as rules
from agent.domain.tables import need


@dataclass(frozen=True)
class CorrectionMatch:
    memory_id: str
    line: str  # "Correction: X — fails when A; fine when B [memory:id]"
    similarity: float
    shared_words: int

    def as_dict(self) -> dict[str, Any]:
        return {"id": f"memory:{self.memory_id}", "source_ids": [f"memory:{self.memory_id}"],
                "similarity": round(self.similarity, 4), "shared_words": self.shared_words,
                "text": self.line}


@dataclass(frozen=True)
class CorrectionsConfig:
    """[context] correction_*: when a correction applies, and how many a prompt shows."""

    min_similarity: float  # correction_min_similarity
    min_shared: int  # correction_min_shared_words
    max: int  # correction_max

    @classmethod
    def from_table(cls, ctx: Mapping[str, Any]) -> CorrectionsConfig:
        return cls(min_similarity=float(need(ctx, "correction_min_similarity")),
                   min_shared=int(need(ctx, "correction_min_shared_words")),
                   max=int(need(ctx, "correction_max")))


class CorrectionMatcher:
    def __init__(self, cfg: CorrectionsConfig) -> None:
        self.cfg = cfg

    def match(self, conn: psycopg.Connection[Any], user_id: Any, query_text: str,
              vectors: Sequence[Any]) -> list[CorrectionMatch]:
        """The corrections that apply to `query_text` (each vector is tried: the compound
        query's, and at a session start the last session's note), the closest first."""
        best: dict[str, CorrectionMatch] = {}
        for vec in vectors:
            for mid, content, fails, fine, sim in conn.execute(
                    query("corrections_matching"), {"q": vector_text(vec), "user": user_id}):
                shared = rules.shared_words(query_text, fails)
                if not rules.correction_applies(float(sim), self.cfg.min_similarity, shared,
                                                self.cfg.min_shared):
                    continue
                key = str(mid)
                if key not in best or best[key].similarity < float(sim):
                    best[key] = CorrectionMatch(
                        key, rules.correction_line(content, fails, fine, key), float(sim),
                        shared)
        ranked = sorted(best.values(), key=lambda m: (-m.similarity, -m.shared_words))
        return ranked[: self.cfg.max]
