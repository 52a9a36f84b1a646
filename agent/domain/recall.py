"""The retrieval chain after the database (seed 003 §17e, seed 004; issue "Recall that
finds what was said").

candidates from ranked lists (dense and BM25 over day_table, memories and
holographic blocks; dense and BM25 inside the time window the query names; the
cortex) → weighted reciprocal rank fusion (k = 60), scaled by the best candidate's
fused score → relevance x time factor (inside the asked window) x person factor (said
by, or naming, a person the query names: a preference that moves no turn down more than
person_max_shift places, never a filter; preferred_order) x role factor (the assistant's words count
less than the user's) x mood factor (seed 000 §4.2: only with a mood given and on
items with an emotional imprint, within ±mood_max_boost) → plus
small tie-breakers (recency, importance, goal boost: seed 003 §17e #4's weights, scaled
by tiebreak_weight so they reorder only near-ties), or, when the query asks for the
current state ("now", "still", "latest"), a newness term (scaled by relevance) that
lets the newer of two relevant statements win → rerank (0.6 rerank + 0.4 weighted,
when a reranker is present). With [recall] fusion = "learned" (issue 39 item 2), a linear
model over each candidate's features (fusion.py) replaces the weighted RRF and its time and
person factors (learned_parts) → a verdict per item and per query (strong_match /
weak_match / no_match) → drop ids injected in the last few turns → fit a token budget.

The verdict is judged on a match score: (1 - w)·cosine similarity of the item to
the query + w·IDF-weighted coverage of the query's terms (lexical.py), with
thresholds from config [recall], calibrated by
`python -m bench calibrate` (bench/results/calibration-*.md). Verification mode
(claims a reply relies on) requires the stricter verification threshold.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from agent.domain.claims import ClaimState, claim_factor
from agent.domain.contextual import speaker_label
from agent.domain.emotion import EmotionState, MoodCue, mood_term
from agent.domain.fusion import FusionModel, candidate_features, without_preference
from agent.domain.lexical import match_score, term_set
from agent.domain.tables import need, scalar_fields
from agent.domain.timeref import TimeWindow, overlap_score

VERDICTS = ("strong_match", "weak_match", "no_match")
FUSIONS = ("learned", "rrf")  # [recall] fusion
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclass(frozen=True)
class RecallConfig:
    rrf_k: int
    dense_list_weight: float
    bare_list_weight: float
    plain_dense_list_weight: float
    plain_bare_list_weight: float
    sparse_list_weight: float
    window_list_weight: float
    cortex_list_weight: float
    fallback_list_weight: float
    fallback_query_variants: int
    heuristic_fallback: bool
    bm25_k1: float
    bm25_b: float
    bm25_term_depth: int
    hnsw_ef_search: tuple[int, ...]  # by memories' size: see ef_search_for
    hnsw_ef_search_sizes: tuple[int, ...]
    recency_half_life_days: float
    weight_recency: float
    weight_importance: float
    goal_boost: float
    tiebreak_weight: float
    current_state_weight: float
    time_boost: float
    person_boost: float
    person_mention_boost: float
    person_boost_min_terms: int
    person_max_shift: int  # places the person preference may push a turn down; -1: no limit
    assistant_weight: float
    retired_claim_weight: float  # a claim not valid at the asked time: claim_demotion
    rerank_candidate_multiplier: int
    weight_rerank: float
    weight_pre_rerank: float
    top_k: int
    grounded_pool: int  # the grounded reply's own pool: the user's nearest turns (issue 40)
    link_seed_rank: int  # a turn this high in a list brings its neighbours (0: no hop)
    token_budget: int
    strong_match_min_score: float
    weak_match_min_score: float
    verification_min_score: float
    lexical_weight: float
    injected_dedup_size: int
    compound_query_messages: int
    max_message_chars: int  # recall reads at most this much of one message (issue 38)
    warm_queries: int  # searches of memories' HNSW index when the loop starts (services warm)
    fusion: str  # "learned": the fitted model of fusion.py; "rrf": the weighted RRF
    fusion_model: str  # the learned fusion's JSON file (the recall service loads it)
    adjacent_turns: str  # ADJACENT_MODES: the turns returned with each recalled turn

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> RecallConfig:
        fusion = str(need(t, "fusion"))
        if fusion not in FUSIONS:
            raise ValueError(f"recall.fusion={fusion!r}: must be one of {', '.join(FUSIONS)}")
        adjacent = str(need(t, "adjacent_turns"))
        if adjacent not in ADJACENT_MODES:
            raise ValueError(f"recall.adjacent_turns={adjacent!r}: must be one of "
                             f"{', '.join(ADJACENT_MODES)}")
        return cls(**scalar_fields(cls, t, skip=("hnsw_ef_search", "hnsw_ef_search_sizes",
                                                 "fusion", "fusion_model", "adjacent_turns")),
                   hnsw_ef_search=tuple(int(v) for v in need(t, "hnsw_ef_search")),
                   hnsw_ef_search_sizes=tuple(int(v) for v in need(t, "hnsw_ef_search_sizes")),
                   fusion=fusion, fusion_model=str(need(t, "fusion_model")),
                   adjacent_turns=adjacent)

    def ef_search_for(self, memories: int) -> int:
        """hnsw.ef_search for a memories table of about `memories` rows (every user's): the
        first band whose size it does not pass ([recall] hnsw_ef_search_sizes), else the
        last. A larger HNSW graph needs a wider search for the same recall against exact
        search (bench.loop's index recall on real embeddings)."""
        for size, ef in zip(self.hnsw_ef_search_sizes, self.hnsw_ef_search, strict=False):
            if memories <= size:
                return ef
        return self.hnsw_ef_search[-1]


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
    bare_rank: int | None = None  # dense over a turn's verbatim content
    window_dense_rank: int | None = None
    window_sparse_rank: int | None = None
    fallback_rank: int | None = None  # rank under the weak-match fallback's rewritten queries
    # the turn right before or after a turn that ranked this high in a list (issue 39 item 3:
    # the conversation's own links, followed one hop); link_next: it is the one after
    link_rank: int | None = None
    link_next: bool = False
    speaker: str | None = None
    role: str | None = None
    source_ids: tuple[str, ...] = ()
    external_ids: tuple[str, ...] = ()
    token_count: int | None = None
    goal_similarity: float | None = None
    status: str | None = None
    coverage: float | None = None  # IDF-weighted share of query terms present (lexical.py)
    emotion: EmotionState | None = None  # a memory's imprint, read only when a mood is given
    claim: ClaimState | None = None  # its claim on a slot (claims.py), or its turn's memory's
    # a turn's session and each list's own score (the learned fusion's features, fusion.py)
    session_id: str | None = None
    bm25_score: float | None = None  # Okapi BM25 over its contextual index entry
    dense_similarity: float | None = None  # cosine of its contextual vector to the query
    bare_similarity: float | None = None  # cosine of its verbatim content's vector

    def merge(self, **fields: Any) -> Candidate:
        """The same item seen by another retriever: keep the best of each field."""
        return replace(self, **merge_updates(lambda key: getattr(self, key), fields))


def merge_updates(current: Callable[[str], Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """What another retriever's sighting of an item changes (Candidate.merge's rules): the
    best rank per list, the higher similarity, the union of sources, and any field still
    empty (None, "", or importance still at its 0.5 default). `current(name)`: the item's
    value, None where it has none."""
    updates: dict[str, Any] = {}
    for key, value in fields.items():
        if value is None:
            continue
        now = current(key)
        if now is None:
            updates[key] = value
        elif key in _RANKS:
            if value < now:
                updates[key] = value
        elif key == "similarity":
            if value > now:
                updates[key] = value
        elif key in _SOURCES:
            updates[key] = tuple(dict.fromkeys([*now, *value]))
        elif now == "" or (key == "importance" and now == 0.5):
            updates[key] = value
    return updates


class CandidatePool:
    """Candidates gathered from several ranked lists, merged as they arrive by
    Candidate.merge's rules, frozen once by `build` (one Candidate per item instead of a
    new frozen copy per sighting)."""

    def __init__(self) -> None:
        self._found: dict[str, dict[str, Any]] = {}

    def add(self, key: str, **fields: Any) -> None:
        self.put(key, fields)

    def put(self, key: str, fields: dict[str, Any]) -> None:
        """`add` with the fields as a dict, which the pool keeps on an item's first
        sighting (the caller must not change it afterwards)."""
        found = self._found.get(key)
        if found is None:
            fields["id"] = key
            for name in _DEFAULTED:  # None there: the default (importance 0.5, no sources)
                if name in fields and fields[name] is None:
                    del fields[name]
            self._found[key] = fields
            return
        # an item's dict holds None where a sighting had no value: the Candidate default
        # counts only for importance (0.5, replaced by any other sighting's value)
        found.update(merge_updates(found.get, fields))

    def set(self, key: str, **fields: Any) -> None:
        """Overwrite fields of an item already in the pool (a memory's emotional imprint)."""
        self._found[key].update(fields)

    def pop(self, key: str) -> dict[str, Any] | None:
        return self._found.pop(key, None)

    def turn_seeds(self, max_rank: int) -> list[tuple[str, int]]:
        """(row id, best rank) of the pool's turns ranked `max_rank` or better in a list of
        the question's own (dense, bare, BM25, in its window), best first: whose neighbours
        recall follows (issue 39 item 3)."""
        out = []
        for key, f in self._found.items():
            if f["kind"] != "day_table":
                continue
            ranks = [f.get(r) for r in _SEED_RANKS]
            best = min((r for r in ranks if r is not None), default=None)
            if best is not None and best <= max_rank:
                out.append((best, key.split(":", 1)[1]))
        return [(rid, rank) for rank, rid in sorted(out)]

    def ids(self, kind: str) -> list[str]:
        """The row ids of the pool's items of one kind ("day_table:<id>" -> "<id>")."""
        return [key.split(":", 1)[1] for key, f in self._found.items() if f["kind"] == kind]

    def __contains__(self, key: str) -> bool:
        return key in self._found

    def build(self, coverage: Callable[[str], float] | None = None) -> list[Candidate]:
        """The candidates, frozen; `coverage`: each one's term coverage from its content
        (set here: a dataclasses.replace afterwards cost ~9 us a candidate)."""
        if coverage is None:
            return [Candidate(**fields) for fields in self._found.values()]
        return [Candidate(**fields, coverage=coverage(fields["content"]))
                for fields in self._found.values()]


_RANKS = frozenset(f.name for f in fields(Candidate) if f.name.endswith("_rank"))
# the lists whose best turns bring their neighbours (not the cortex, nor a rewrite's list)
_SEED_RANKS = ("dense_rank", "bare_rank", "sparse_rank", "window_dense_rank",
               "window_sparse_rank")
_SOURCES = frozenset(("source_ids", "external_ids"))
# the fields whose default is not None
_DEFAULTED = tuple(f.name for f in fields(Candidate) if f.default not in (None, MISSING))


@dataclass(frozen=True)
class AdjacentTurn:
    """A turn said right before or after a recalled turn in its session, returned with it
    ([recall] adjacent_turns; issue 39 item 2, "where a question and its answer sit in
    adjacent turns, return the pair"): the answer to a question found by its wording, or
    the question a short answer replies to."""

    id: str  # "day_table:<uuid>"
    content: str
    created_at: datetime | None
    speaker: str | None
    role: str | None
    external_id: str | None
    after: bool  # said right after the recalled turn (else right before it)
    tokens: int

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "content": self.content, "speaker": self.speaker,
                "role": self.role, "after": self.after,
                "created_at": None if self.created_at is None else self.created_at.isoformat(),
                "external": self.external_id}


ADJACENT_MODES = ("off", "next", "both")


def attach_adjacent(items: Sequence[RecallItem], found: Mapping[int, Sequence[AdjacentTurn]],
                    budget: int, skip: Iterable[str] = ()) -> tuple[list[RecallItem], int]:
    """`items` with the adjacent turns `found` for each (by its place in `items`) attached,
    best item first, within `budget` tokens; a turn that is itself an item, or the source of
    one, or attached to a better item already, or in `skip` (the ids recall leaves out: the
    chat window's), is not attached. Returns the items and the tokens the attached turns
    take."""
    taken = ({i.id for i in items} | {f"day_table:{s}" for i in items for s in i.source_ids}
             | set(skip))
    out: list[RecallItem] = []
    used = 0
    for n, item in enumerate(items):
        extra = []
        for turn in found.get(n, ()):
            if turn.id in taken or used + turn.tokens > budget:
                continue
            taken.add(turn.id)
            used += turn.tokens
            extra.append(turn)
        out.append(replace(item, adjacent=tuple(extra)) if extra else item)
    return out, used


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
    speaker: str | None = None  # whose words: a name, or the role's label
    role: str | None = None
    # kind "cluster" (a RAPTOR node for a broad question, agent/domain/broad.py): its
    # level, leaf count, the asked window and its member blocks (id, dates, turns)
    cluster: dict[str, Any] | None = None
    adjacent: tuple[AdjacentTurn, ...] = ()  # the turns said right before / after it

    def as_dict(self) -> dict[str, Any]:
        if self.cluster is not None:
            return {**self._as_dict(), "level": self.cluster["level"],
                    "leaf_count": self.cluster["leaf_count"],
                    "window": self.cluster["window"], "detector": self.cluster["detector"],
                    "sources": {"day_table": list(self.source_ids),
                                "external": list(self.external_ids),
                                "blocks": self.cluster["blocks"]}}
        return self._as_dict()

    def _as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.kind, "content": self.content, "speaker": self.speaker,
            "role": self.role,
            "score": round(self.score, 5), "verdict": self.verdict,
            "similarity": None if self.similarity is None else round(self.similarity, 5),
            "coverage": None if self.coverage is None else round(self.coverage, 5),
            "match": None if self.match is None else round(self.match, 5),
            "created_at": None if self.created_at is None else self.created_at.isoformat(),
            "sources": {"day_table": list(self.source_ids), "external": list(self.external_ids)},
            "components": {k: round(v, 5) for k, v in self.components.items()},
            **({"adjacent": [a.as_dict() for a in self.adjacent]} if self.adjacent else {}),
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
    window: TimeWindow | None = None  # the period the query asks about, resolved
    rewrites: list[str] = field(default_factory=list)  # the weak-match fallback's queries
    rewritten_by: str | None = None  # "heuristic" or "llm:<provider>/<model>"
    # the broad-question heuristic's decision when it fired (agent/domain/broad.py)
    broad: dict[str, Any] | None = None

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
    total = 0.0
    if weights is None:
        weights = (1.0,) * len(ranks)
    elif len(weights) != len(ranks):
        raise ValueError(f"{len(ranks)} ranks, {len(weights)} weights")
    for r, wi in zip(ranks, weights, strict=False):  # the lengths are checked above
        if r is not None:
            total += wi / (k + r)
    return total


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


@dataclass(frozen=True)
class QueryContext:
    """What the query says beyond its words: the period it asks about, whether it asks
    for the current state, and the people (speakers) it names, lower-cased."""

    window: TimeWindow | None = None
    asks_current: bool = False
    people: frozenset[str] = frozenset()
    mood: MoodCue | None = None  # the current emotional state (mood congruence); None: off
    asks_past: bool = False  # an earlier state ("before", "used to"): timeref.PAST_CUES


def _names(content: str, people: frozenset[str]) -> bool:
    words = {w.lower() for w in _WORD.findall(content)}
    return bool(words & people)


_CLAUSE = re.compile(r"\s*(?:;|,|\band\b|\bor\b|\bthen\b|\bafter\b|\bbefore\b)\s*",
                     re.IGNORECASE)


def heuristic_variants(query: str, terms: Sequence[str], n: int) -> list[str]:
    """The weak-match fallback's rewrites when no LLM rewrites the query (seed 003 §17e
    #7; a named heuristic, not a model): the query's clauses on their own (a question
    about two things becomes two), then its informative words alone."""
    out: list[str] = []
    clauses = [c.strip(" ?.!") for c in _CLAUSE.split(query)]
    for clause in clauses:
        if len(clause.split()) >= 2 and clause.lower() != query.strip(" ?.!").lower():
            out.append(clause)
    keywords = " ".join(terms)
    if keywords and keywords.lower() != query.lower():
        out.append(keywords)
    return list(dict.fromkeys(out))[:max(0, n)]


REWRITE_SYSTEM = (
    "You rewrite a question about past conversations into search queries that would find "
    "the turns answering it. Use other words than the question (synonyms, the words a "
    "person would have said), split a question about several things into one query per "
    "thing, and keep the names and dates the question gives. Answer with the queries "
    "only, one per line, no numbering, no commentary."
)


def rewrite_messages(query: str, n: int) -> list[dict[str, str]]:
    """The prompt of the LLM rewrite (seed 003 §17e #7: rewritten or decomposed queries)."""
    return [{"role": "system", "content": REWRITE_SYSTEM},
            {"role": "user", "content": f"At most {n} queries for: {query.strip()}"}]


_LIST_MARK = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|q\d*:|query\s*\d*:)\s*", re.IGNORECASE)


def parse_rewrites(text: str, query: str, n: int) -> list[str]:
    """The queries of an LLM's answer: one per line, list marks and quotes stripped,
    the question itself and repeats dropped, at most `n`, none over 300 characters."""
    out: list[str] = []
    seen = {query.strip(" ?.!").lower()}
    for line in text.splitlines():
        q = _LIST_MARK.sub("", line).strip().strip("\"'`").strip()
        key = q.strip(" ?.!").lower()
        if len(q) < 3 or len(q) > 300 or key in seen or q.endswith(":"):
            continue
        seen.add(key)
        out.append(q)
    return out[:max(0, n)]


def relevance_parts(c: Candidate, fused: float, best: float, newness: float,
                    now: datetime, cfg: RecallConfig, ctx: QueryContext) -> dict[str, float]:
    """The score of one candidate and what it is made of."""
    parts = {
        "rrf": fused,
        "relevance": fused / best if best > 0 else 0.0,
        "recency": recency(c.created_at, now, cfg.recency_half_life_days),
        "importance": min(1.0, max(0.0, c.importance)),
        "goal": max(0.0, c.goal_similarity or 0.0),
    }
    if c.fallback_rank is not None:  # its rank under the weak-match fallback's rewrites
        parts["rewrite_rank"] = float(c.fallback_rank)
    factor = 1.0
    if ctx.window is not None:
        parts["time"] = overlap_score(c.created_at, ctx.window)
        factor *= 1 + cfg.time_boost * parts["time"]
    preferred = 1.0  # the person preference's factor, kept apart (preferred_order)
    if ctx.people:
        # a reply with next to no words of its own ("lol", "Yes!") is found through the
        # turn it quotes: the words that matched are the other speaker's, so no said-by
        said = (c.speaker is not None and c.speaker.lower() in ctx.people
                and len(term_set(c.content)) >= cfg.person_boost_min_terms)
        named = _names(c.content, ctx.people)
        parts["person"] = 1.0 if said else 0.5 if named else 0.0
        preferred = 1 + (cfg.person_boost if said else cfg.person_mention_boost if named
                         else 0.0)
    if c.role == "assistant":
        factor *= cfg.assistant_weight
    if ctx.mood is not None and c.emotion is not None:  # seed 000 §4.2, ±mood_max_boost
        parts["mood"] = mood_term(c.emotion, ctx.mood)
        factor *= 1 + parts["mood"]
    tiebreak = (cfg.weight_recency * parts["recency"]
                + cfg.weight_importance * parts["importance"] + cfg.goal_boost * parts["goal"])
    weighted = parts["relevance"] * factor * preferred + cfg.tiebreak_weight * tiebreak
    unpreferred = parts["relevance"] * factor + cfg.tiebreak_weight * tiebreak
    if ctx.asks_current:  # the newer of two relevant statements wins, not any new turn
        parts["newness"] = newness
        weighted += cfg.current_state_weight * newness * parts["relevance"]
        unpreferred += cfg.current_state_weight * newness * parts["relevance"]
    parts["weighted"] = weighted
    if preferred != 1.0:  # the score the person preference did not touch
        parts["unpreferred"] = unpreferred
    return parts


def learned_parts(parts: dict[str, float], learned: float, unpreferred: float,
                  c: Candidate, cfg: RecallConfig) -> dict[str, float]:
    """relevance_parts' score under the learned fusion: the model's score, which has read
    the lists and the person cues itself (fusion.FEATURES), x what its training data could
    not teach, as relevance_parts weighs it: the time factor (21 of REALTALK's 357 dev
    questions name a period, and in 4 the evidence was said inside it: they ask when a
    thing happened, not when it was said), the assistant's words and mood congruence (none
    there), the newness of a current-state question, + the goal boost (no goals there).
    `unpreferred`: the model's score without the person preference's features
    (fusion.without_preference; < 0 when the question names nobody), which preferred_order
    bounds the learned preference by."""
    factor = cfg.assistant_weight if c.role == "assistant" else 1.0
    if "time" in parts:
        factor *= 1 + cfg.time_boost * parts["time"]
    if "mood" in parts:
        factor *= 1 + parts["mood"]
    factor += cfg.current_state_weight * parts.get("newness", 0.0)
    goal = cfg.tiebreak_weight * cfg.goal_boost * parts["goal"]
    out = {k: v for k, v in parts.items() if k != "unpreferred"}
    out["learned"] = learned
    out["weighted"] = learned * factor + goal
    if unpreferred >= 0 and unpreferred != learned:
        out["unpreferred"] = unpreferred * factor + goal
    return out


def claim_demotion(parts: dict[str, float], c: Candidate, ctx: QueryContext,
                   cfg: RecallConfig) -> dict[str, float]:
    """A separate step after the fusion (issue 39 item 5, claims.py): a candidate whose
    claim on a slot was not valid at the asked time (a retired one, unless the question
    asks about the past or a period) keeps retired_claim_weight of its score, and the
    rival valid at a time the question names gains as much; a turn carries its memory's
    claim. A factor, never a filter."""
    if c.claim is None:
        return parts
    factor = claim_factor(c.claim, ctx.window, ctx.asks_past, ctx.asks_current,
                          cfg.retired_claim_weight)
    out = {**parts, "claim": factor}
    for key in ("weighted", "unpreferred"):
        if key in out:
            out[key] *= factor
    return out


def preferred_order(preferred: Sequence[int], plain: Sequence[int], shift: int) -> list[int]:
    """`preferred` (the ranking with the person preference), moved so that no item ends more
    than `shift` places below its place in `plain` (the ranking without it): a question that
    names one speaker prefers that speaker's words, and never hides the other speaker's
    (issue 39 item 4: the name may be the wrong one; the verdict, not the ranking, says
    "that was someone else"). Both are the same items, best first; shift < 0: no limit
    (`preferred` as it is), 0: `plain`.

    At each place, the best of `plain` not yet placed takes it when its deadline (its
    place in `plain` + shift) has come; otherwise the best of `preferred` not yet placed.
    Deadlines are distinct and met in order, so every item ends at or above its deadline.
    """
    if shift < 0:
        return list(preferred)
    place = {item: n for n, item in enumerate(plain)}
    out: list[int] = []
    done: set[int] = set()
    p = q = 0
    for slot in range(len(plain)):
        while q < len(plain) and plain[q] in done:
            q += 1
        if q < len(plain) and place[plain[q]] + shift <= slot:
            pick = plain[q]
        else:
            while preferred[p] in done:
                p += 1
            pick = preferred[p]
        out.append(pick)
        done.add(pick)
    return out


def fused_scores(candidates: Sequence[Candidate], cfg: RecallConfig,
                 ctx: QueryContext) -> tuple[list[float], list[float]]:
    """Each candidate's weighted RRF score over the lists that hold it, and its newness."""
    # a plain query names no speaker and no period ("where do I work?"): the name and
    # date the contextual vector carries do not help it, the bare content's vector does
    plain = not ctx.people and ctx.window is None
    dense_w, bare_w = ((cfg.plain_dense_list_weight, cfg.plain_bare_list_weight) if plain
                       else (cfg.dense_list_weight, cfg.bare_list_weight))
    weights = (dense_w, bare_w, cfg.sparse_list_weight,
               cfg.cortex_list_weight, cfg.window_list_weight, cfg.window_list_weight,
               cfg.fallback_list_weight)
    fused = [rrf((c.dense_rank, c.bare_rank, c.sparse_rank, c.cortex_rank,
                  c.window_dense_rank, c.window_sparse_rank, c.fallback_rank),
                 cfg.rrf_k, weights)
             for c in candidates]
    # newness: where a candidate's date falls between the oldest and newest candidate; only
    # a question about the current state weighs it (relevance_parts)
    stamps = ([None if c.created_at is None else c.created_at.timestamp() for c in candidates]
              if ctx.asks_current else [None] * len(candidates))
    known = [t for t in stamps if t is not None]
    oldest, newest = (min(known), max(known)) if known else (0.0, 0.0)
    newness = [0.0 if stamp is None or newest <= oldest
               else (stamp - oldest) / (newest - oldest) for stamp in stamps]
    return fused, newness


def pool_features(candidates: Sequence[Candidate], fused: Sequence[float],
                  newness: Sequence[float], *, now: datetime, cfg: RecallConfig,
                  ctx: QueryContext) -> list[list[float]]:
    """The learned fusion's feature vectors (fusion.FEATURES) of one pool, from
    fused_scores' output: what recall_pipeline scores and bench/suites/fusion_train.py fits."""
    best = max(fused, default=0.0)
    return candidate_features(
        candidates, [f / best if best > 0 else 0.0 for f in fused], now=now,
        people=ctx.people, window=ctx.window, asks_current=ctx.asks_current,
        newness=newness, min_terms=cfg.person_boost_min_terms,
        recency=[recency(c.created_at, now, cfg.recency_half_life_days) for c in candidates])


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
    context: QueryContext | None = None,
    fusion: FusionModel | None = None,
) -> RecallResult:
    """Fuse, weight, rerank, judge, de-duplicate and fit candidates to a budget.

    `fusion` (given when [recall] fusion = "learned"): the learned model's score replaces
    the weighted RRF relevance and its time and person factors (learned_parts); its person
    preference stays within person_max_shift places, as the hand-weighted one does."""
    ctx = context or QueryContext()
    if not candidates:
        return RecallResult(items=[], verdict="no_match", candidates=0, window=ctx.window)
    fused, newness = fused_scores(candidates, cfg, ctx)
    best = max(fused)
    learned: list[tuple[float, float]] | None = None  # (score, score without the preference)
    if fusion is not None:
        learned = [(fusion.probability(x), fusion.probability(without_preference(x))
                    if ctx.people else -1.0)
                   for x in pool_features(candidates, fused, newness, now=now, cfg=cfg,
                                          ctx=ctx)]
    scored: list[tuple[float, Candidate, dict[str, float]]] = []
    plain_scores: list[float] = []
    for n, (c, fuse) in enumerate(zip(candidates, fused, strict=True)):
        parts = relevance_parts(c, fuse, best, newness[n], now, cfg, ctx)
        if learned is not None:
            parts = learned_parts(parts, *learned[n], c, cfg)
        parts = claim_demotion(parts, c, ctx, cfg)
        score = parts["weighted"]
        plain_score = parts.get("unpreferred", score)
        if rerank_scores is not None and c.id in rerank_scores:
            parts["rerank"] = rerank_scores[c.id]
            score = cfg.weight_rerank * rerank_scores[c.id] + cfg.weight_pre_rerank * score
            plain_score = (cfg.weight_rerank * rerank_scores[c.id]
                           + cfg.weight_pre_rerank * plain_score)
        scored.append((score, c, parts))
        plain_scores.append(plain_score)
    # the person preference reorders, within person_max_shift places (preferred_order)
    by_plain = sorted(range(len(scored)), key=lambda n: (-plain_scores[n], scored[n][1].id))
    by_pref = sorted(range(len(scored)), key=lambda n: (-scored[n][0], scored[n][1].id))
    scored = [scored[n] for n in preferred_order(by_pref, by_plain, cfg.person_max_shift)]
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
            components=parts, role=c.role,
            speaker=speaker_label(c.speaker, c.role) if c.role else c.speaker,
        ))
    return RecallResult(
        items=items, verdict=query_verdict(items), candidates=len(candidates),
        dropped_recent=dropped_recent, dropped_budget=dropped_budget, tokens=used,
        reranked=rerank_scores is not None, window=ctx.window,
    )
