"""Learned fusion (issue 39 item 2): a candidate's relevance from a small model fitted on
real conversations, instead of hand-weighted reciprocal rank fusion.

Each candidate gets a feature vector (FEATURES) from what the pipeline already holds: its
rank in every list and each list's own score (BM25, the contextual and bare cosines), the
hand-weighted RRF relevance, the judged similarity and its gap to the pool's best, term
coverage, the person and time cues of the query, recency and newness, its kind and role, its
length, whether a memory or block of the pool cites it, and its session in the pool (how
many candidates it holds, the session's best relevance, whether it is that best, and the
best relevance of a turn said within NEIGHBOUR_S of it in the same session: the other half
of a question/answer pair), and its voice (first person: its speaker's own statement;
second person: a reply addressing the other one; said_statement: a first-person turn, not
addressing anyone, of the speaker the question names, the person preference's feature).

The model is linear over those features (FusionModel: one weight per feature and a bias,
with the standardisation folded in), fitted offline (a logistic regression, or listwise) on
REALTALK's dev conversations by bench/suites/fusion_train.py and shipped as
agent/models/recall_fusion.json, whose `trained` entry names the command and the data.
Scoring is a dot product in pure Python: a few microseconds a candidate. The domain does
not read the file; the recall service loads it ([recall] fusion = "learned", fusion_model)
and passes it to recall_pipeline.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent.domain.lexical import STOPWORDS
from agent.domain.timeref import overlap_score

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
NEIGHBOUR_S = 600.0  # two turns of a session at most this far apart count as neighbours
# list rank fields and the feature each gives (1 / sqrt(rank); 0 when not in the list)
RANK_FEATURES = (("dense_rank", "dense_inv"), ("bare_rank", "bare_inv"),
                 ("sparse_rank", "sparse_inv"), ("window_dense_rank", "wdense_inv"),
                 ("window_sparse_rank", "wsparse_inv"), ("cortex_rank", "cortex_inv"),
                 ("fallback_rank", "fallback_inv"))
# the feature groups the ablations drop together (bench/suites/fusion_train.py)
GROUPS: dict[str, tuple[str, ...]] = {
    "ranks": tuple(f for _, f in RANK_FEATURES),
    "rrf": ("relevance",),
    "lexical": ("bm25_norm", "coverage"),
    "dense": ("sim", "sim_gap", "dense_sim", "bare_sim"),
    "person": ("people_asked", "person_said", "person_named", "short_reply", "said_statement"),
    # issue 39 item 4: "I called out of work today" states a thing; "enjoy your day off!" is
    # the other speaker's reply to it, in the same words (FIRST_PERSON / SECOND_PERSON)
    "voice": ("first_person", "second_person"),
    "time": ("window_asked", "time_overlap", "recency", "newness_current"),
    "item": ("log_terms", "kind_memory", "kind_block", "kind_cortex", "assistant", "pointed"),
    "session": ("session_share", "session_best", "session_top", "neighbour_best"),
    # issue 39 item 3: a neighbour of a turn ranked high in a list ([recall] link_seed_rank)
    "links": ("link_inv", "link_next"),
}
FEATURES: tuple[str, ...] = tuple(f for group in GROUPS.values() for f in group)
_INDEX = {name: n for n, name in enumerate(FEATURES)}
# the person preference's features: zeroed, they give the score preferred_order bounds it by
PREFERENCE = tuple(_INDEX[f] for f in ("person_said", "person_named", "said_statement"))
# a turn in the first person (its speaker's own statement) or addressing the other one; the
# words as _WORD splits them ("I'm" -> "i", "m"; "you're" -> "you", "re")
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "im", "ive", "we", "us", "our"})
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "youre", "u", "ur"})


def without_preference(features: Sequence[float]) -> list[float]:
    """The vector with the person preference's features at 0: the candidate as if the
    question named nobody it said or mentioned (recall's preferred_order keeps the learned
    person preference within person_max_shift places of this ranking, issue 39 item 4)."""
    out = list(features)
    for n in PREFERENCE:
        out[n] = 0.0
    return out


class FusionModelError(ValueError):
    """A fusion model file that does not have the expected shape: the message says what."""


@dataclass(frozen=True)
class FusionModel:
    """A linear model over FEATURES: logit = bias + sum(weight x feature), read through a
    sigmoid (fitted as a logistic regression, or listwise: a softmax over each question's
    candidates, whose logit orders them the same way)."""

    weights: tuple[float, ...]  # one per FEATURES entry (0 for a feature it does not use)
    bias: float
    meta: Mapping[str, Any]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FusionModel:
        """From the JSON shipped in agent/models: {"kind": "linear", "bias": b,
        "weights": {feature: w}, ...}. Unknown features are refused by name; a feature the
        file does not name weighs 0 (a model fitted with that feature group dropped)."""
        if data.get("kind") != "linear":
            raise FusionModelError(f"fusion model kind {data.get('kind')!r}; known: 'linear'")
        given = data.get("weights")
        if not isinstance(given, Mapping):
            raise FusionModelError("fusion model: 'weights' must map feature names to numbers")
        unknown = sorted(set(given) - set(FEATURES))
        if unknown:
            raise FusionModelError(f"fusion model: unknown feature(s) {unknown}")
        try:
            weights = tuple(float(given.get(name, 0.0)) for name in FEATURES)
            bias = float(data.get("bias", 0.0))
        except (TypeError, ValueError) as exc:
            raise FusionModelError(f"fusion model: a weight is not a number ({exc})") from exc
        if not all(math.isfinite(w) for w in (*weights, bias)):
            raise FusionModelError("fusion model: weights must be finite numbers")
        meta = {k: v for k, v in data.items() if k not in ("weights", "bias")}
        return cls(weights=weights, bias=bias, meta=meta)

    def logit(self, features: Sequence[float]) -> float:
        if len(features) != len(self.weights):
            raise ValueError(f"{len(features)} features for {len(self.weights)} weights")
        return self.bias + sum(map(operator.mul, self.weights, features))

    def probability(self, features: Sequence[float]) -> float:
        """sigmoid(logit), 0..1: the score recall ranks by (a probability that the candidate
        is an evidence turn for a pointwise fit; for a listwise fit only its order counts)."""
        z = self.logit(features)
        if z >= 0:
            return 1.0 / (1.0 + math.exp(-z))
        e = math.exp(z)
        return e / (1.0 + e)


@functools.lru_cache(maxsize=8192)
def _words(content: str) -> tuple[frozenset[str], int]:
    """A text's distinct lower-cased words, and how many are not stopwords (cached: the
    same turns and memories come back question after question)."""
    words = frozenset(_WORD.findall(content.lower()))
    return words, len(words - STOPWORDS)


def candidate_features(
    candidates: Sequence[Any], relevance: Sequence[float], *, now: datetime,
    people: frozenset[str], window: Any, asks_current: bool, newness: Sequence[float],
    recency: Sequence[float], min_terms: int,
) -> list[list[float]]:
    """The FEATURES vector of every candidate of one pool (agent.domain.recall.Candidate),
    in order. `relevance`: each candidate's hand-weighted RRF relevance (fused / best);
    `newness` and `recency`: as relevance_parts computes them; `min_terms`: the said-by
    rule's [recall] person_boost_min_terms."""
    n = len(candidates)
    if n == 0:
        return []
    best_sim = max((c.similarity for c in candidates if c.similarity is not None), default=0.0)
    best_bm25 = max((c.bm25_score for c in candidates if c.bm25_score is not None),
                    default=0.0)
    dense_floor = min((c.dense_similarity for c in candidates
                       if c.dense_similarity is not None), default=0.0)
    bare_floor = min((c.bare_similarity for c in candidates
                      if c.bare_similarity is not None), default=0.0)
    cited: set[str] = set()  # turns a memory or block of the pool names as its source
    for c in candidates:
        if c.kind != "day_table":
            cited.update(c.source_ids)
    # sessions in the pool: their candidates, best relevance and the turns' times
    sessions: dict[str, list[int]] = {}
    for i, c in enumerate(candidates):
        if c.session_id is not None:
            sessions.setdefault(c.session_id, []).append(i)
    session_best: dict[str, float] = {}
    neighbour = [0.0] * n
    top = [0.0] * n
    for sid, members in sessions.items():
        best_i = max(members, key=lambda i: relevance[i])
        session_best[sid] = relevance[best_i]
        top[best_i] = 1.0
        timed = sorted((candidates[i].created_at.timestamp(), i) for i in members
                       if candidates[i].created_at is not None)
        for a, (ta, i) in enumerate(timed):
            got = 0.0
            for b in (a - 1, a + 1):  # the nearest turn before and after it in the pool
                if 0 <= b < len(timed) and abs(timed[b][0] - ta) <= NEIGHBOUR_S:
                    got = max(got, relevance[timed[b][1]])
            neighbour[i] = got
    asked = 1.0 if people else 0.0
    has_window = window is not None
    out: list[list[float]] = []
    for i, c in enumerate(candidates):
        ranks = [0.0 if getattr(c, field) is None else 1.0 / math.sqrt(getattr(c, field))
                 for field, _ in RANK_FEATURES]
        sim = c.similarity if c.similarity is not None else 0.0
        # its distinct words that are not stopwords: lexical.terms without the stemming and
        # the CJK bigrams (a cheap approximation: terms() cost ~10 us a candidate)
        words, n_terms = _words(c.content)
        said = named = 0.0
        first = 0.0 if words.isdisjoint(FIRST_PERSON) else 1.0
        second = 0.0 if words.isdisjoint(SECOND_PERSON) else 1.0
        if people:
            if c.speaker is not None and c.speaker.lower() in people and n_terms >= min_terms:
                said = 1.0
            if not words.isdisjoint(people):
                named = 1.0
        sid = c.session_id
        held = len(sessions[sid]) if sid is not None else 0  # its session's candidates
        out.append([
            *ranks,
            relevance[i],
            (c.bm25_score or 0.0) / best_bm25 if best_bm25 > 0 else 0.0,
            c.coverage or 0.0,
            sim, sim - best_sim,
            c.dense_similarity if c.dense_similarity is not None else dense_floor,
            c.bare_similarity if c.bare_similarity is not None else bare_floor,
            asked, said, named, 1.0 if n_terms < min_terms else 0.0,
            said * first * (1.0 - second),  # the named speaker's own statement
            first, second,
            1.0 if has_window else 0.0,
            overlap_score(c.created_at, window) if has_window else 0.0,
            recency[i], newness[i] if asks_current else 0.0,
            math.log1p(n_terms), 1.0 if c.kind == "memory" else 0.0,
            1.0 if c.kind == "block" else 0.0, 1.0 if c.kind == "cortex" else 0.0,
            1.0 if c.role == "assistant" else 0.0,
            1.0 if c.kind == "day_table" and any(s in cited for s in c.source_ids) else 0.0,
            held / n, session_best.get(sid, 0.0) if sid is not None else 0.0,
            top[i], neighbour[i],
            0.0 if c.link_rank is None else 1.0 / math.sqrt(c.link_rank),
            1.0 if c.link_rank is not None and c.link_next else 0.0,
        ])
    return out
