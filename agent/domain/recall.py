"""The retrieval chain after the database (issue #4 step 3; seed 003 §17e, seed 004).

candidates (dense | sparse | cortex, each with its rank) → reciprocal rank fusion
(k = 60; the sparse list weighted by sparse_list_weight) → 0.5 relevance + 0.3
recency + 0.2 importance, plus a goal boost, where relevance is the fused score
min-max scaled over the candidates (so it spans 0..1 as the seed's formula assumes;
raw RRF scores differ by a few percent and recency drowned them) → rerank (0.6
rerank + 0.4 weighted, when a reranker is present) → a verdict per item and per
query (strong_match / weak_match / no_match) → drop ids injected in the last few
turns → fit a token budget.

The verdict is judged on a match score: (1 - w)·cosine similarity of the item to
the query + w·IDF-weighted coverage of the query's terms (lexical.py), with
thresholds from config [recall], calibrated by
`python -m bench calibrate` (bench/results/calibration-*.md). Verification mode
(claims a reply relies on) requires the stricter verification threshold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from agent.domain.lexical import match_score
from agent.domain.tables import scalar_fields

VERDICTS = ("strong_match", "weak_match", "no_match")


@dataclass(frozen=True)
class RecallConfig:
    rrf_k: int = 60
    sparse_list_weight: float = 1.0
    recency_half_life_days: float = 7.0
    weight_relevance: float = 0.5
    weight_recency: float = 0.3
    weight_importance: float = 0.2
    goal_boost: float = 0.2
    rerank_candidate_multiplier: int = 3
    weight_rerank: float = 0.6
    weight_pre_rerank: float = 0.4
    top_k: int = 10
    token_budget: int = 2000
    strong_match_min_score: float = 0.65
    weak_match_min_score: float = 0.3
    verification_min_score: float = 0.65
    lexical_weight: float = 0.4
    injected_dedup_size: int = 10
    compound_query_messages: int = 3

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> RecallConfig:
        return cls(**scalar_fields(cls, t))


@dataclass(frozen=True)
class Candidate:
    id: str  # "<kind>:<uuid>"
    kind: str  # day_table | memory | block | cortex
    content: str
    created_at: datetime | None = None
    importance: float = 0.5
    similarity: float | None = None  # cosine to the query
    dense_rank: int | None = None
    sparse_rank: int | None = None
    cortex_rank: int | None = None
    source_ids: tuple[str, ...] = ()
    external_ids: tuple[str, ...] = ()
    token_count: int | None = None
    goal_similarity: float | None = None
    status: str | None = None
    coverage: float | None = None  # IDF-weighted share of query terms present (lexical.py)

    def merge(self, **fields: Any) -> Candidate:
        """The same item seen by another retriever: keep the best of each field."""
        updates: dict[str, Any] = {}
        for key, value in fields.items():
            if value is None:
                continue
            current = getattr(self, key)
            if key.endswith("_rank"):
                updates[key] = value if current is None else min(current, value)
            elif key == "similarity":
                updates[key] = value if current is None else max(current, value)
            elif key in ("source_ids", "external_ids"):
                updates[key] = tuple(dict.fromkeys([*current, *value]))
            elif current is None or current == "" or (key == "importance" and current == 0.5):
                updates[key] = value
        return replace(self, **updates)


@dataclass(frozen=True)
class RecallItem:
    id: str
    kind: str
    content: str
    score: float
    verdict: str
    similarity: float | None
    coverage: float | None
    match: float | None
    created_at: datetime | None
    source_ids: tuple[str, ...]
    external_ids: tuple[str, ...]
    components: dict[str, float]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.kind, "content": self.content,
            "score": round(self.score, 5), "verdict": self.verdict,
            "similarity": None if self.similarity is None else round(self.similarity, 5),
            "coverage": None if self.coverage is None else round(self.coverage, 5),
            "match": None if self.match is None else round(self.match, 5),
            "created_at": None if self.created_at is None else self.created_at.isoformat(),
            "sources": {"day_table": list(self.source_ids), "external": list(self.external_ids)},
            "components": {k: round(v, 5) for k, v in self.components.items()},
        }


@dataclass
class RecallResult:
    items: list[RecallItem]
    verdict: str
    candidates: int
    dropped_recent: list[str] = field(default_factory=list)
    dropped_budget: list[str] = field(default_factory=list)
    tokens: int = 0
    reranked: bool = False

    @property
    def best_similarity(self) -> float | None:
        sims = [i.similarity for i in self.items if i.similarity is not None]
        return max(sims) if sims else None

    @property
    def best_match(self) -> float | None:
        scores = [i.match for i in self.items if i.match is not None]
        return max(scores) if scores else None


def rrf(ranks: Sequence[int | None], k: int, weights: Sequence[float] | None = None) -> float:
    """Weighted reciprocal rank fusion: sum of w / (k + rank) over the lists that hold it."""
    w = weights or (1.0,) * len(ranks)
    return sum(wi / (k + r) for r, wi in zip(ranks, w, strict=True) if r is not None)


def recency(created_at: datetime | None, now: datetime, half_life_days: float) -> float:
    if created_at is None:
        return 0.5
    age_days = max(0.0, (now - created_at).total_seconds() / 86400)
    return math.pow(0.5, age_days / max(1e-9, half_life_days))


def verdict_for(match: float | None, cfg: RecallConfig, verify: bool = False) -> str:
    """strong / weak / no match from the match score (lexical.match_score).

    Verification mode raises the bar for strong_match to the verification
    threshold: a claim a reply relies on needs stronger support.
    """
    if match is None:
        return "no_match"
    strong = cfg.strong_match_min_score
    if verify:
        strong = max(strong, cfg.verification_min_score)
    if match >= strong:
        return "strong_match"
    if match >= cfg.weak_match_min_score:
        return "weak_match"
    return "no_match"


def query_verdict(items: Sequence[RecallItem]) -> str:
    for v in VERDICTS:
        if any(i.verdict == v for i in items):
            return v
    return "no_match"


def recall_pipeline(
    candidates: Sequence[Candidate],
    *,
    now: datetime,
    cfg: RecallConfig,
    k: int,
    rerank_scores: Mapping[str, float] | None = None,
    verify: bool = False,
    recent_ids: set[str] | None = None,
    budget_tokens: int | None = None,
    count_tokens: Callable[[str], int] = lambda s: max(1, len(s.split())),
) -> RecallResult:
    """Fuse, weight, rerank, judge, de-duplicate and fit candidates to a budget."""
    if not candidates:
        return RecallResult(items=[], verdict="no_match", candidates=0)
    weights = (1.0, cfg.sparse_list_weight, 1.0)
    fused = {c.id: rrf((c.dense_rank, c.sparse_rank, c.cortex_rank), cfg.rrf_k, weights)
             for c in candidates}
    hi, lo = max(fused.values()), min(fused.values())
    scored: list[tuple[float, Candidate, dict[str, float]]] = []
    for c in candidates:
        parts = {
            "rrf": fused[c.id],
            "relevance": (fused[c.id] - lo) / (hi - lo) if hi > lo else 1.0,
            "recency": recency(c.created_at, now, cfg.recency_half_life_days),
            "importance": min(1.0, max(0.0, c.importance)),
            "goal": c.goal_similarity or 0.0,
        }
        weighted = (cfg.weight_relevance * parts["relevance"]
                    + cfg.weight_recency * parts["recency"]
                    + cfg.weight_importance * parts["importance"]
                    + cfg.goal_boost * max(0.0, parts["goal"]))
        parts["weighted"] = weighted
        score = weighted
        if rerank_scores is not None and c.id in rerank_scores:
            parts["rerank"] = rerank_scores[c.id]
            score = cfg.weight_rerank * rerank_scores[c.id] + cfg.weight_pre_rerank * weighted
        scored.append((score, c, parts))
    scored.sort(key=lambda s: (-s[0], s[1].id))
    recent = recent_ids or set()
    budget = cfg.token_budget if budget_tokens is None else budget_tokens
    items: list[RecallItem] = []
    dropped_recent: list[str] = []
    dropped_budget: list[str] = []
    used = 0
    for score, c, parts in scored:
        if len(items) >= k:
            break
        if c.id in recent:
            dropped_recent.append(c.id)
            continue
        tokens = c.token_count if c.token_count is not None else count_tokens(c.content)
        if used + tokens > budget:
            dropped_budget.append(c.id)
            continue
        used += tokens
        match = match_score(c.similarity, c.coverage, cfg.lexical_weight)
        items.append(RecallItem(
            id=c.id, kind=c.kind, content=c.content, score=score,
            verdict=verdict_for(match, cfg, verify), similarity=c.similarity,
            coverage=c.coverage, match=match,
            created_at=c.created_at, source_ids=c.source_ids, external_ids=c.external_ids,
            components=parts,
        ))
    return RecallResult(
        items=items, verdict=query_verdict(items), candidates=len(candidates),
        dropped_recent=dropped_recent, dropped_budget=dropped_budget, tokens=used,
        reranked=rerank_scores is not None,
    )
