"""Broad questions read the cortex's RAPTOR levels (seed 001 §5.4; issue 17).

"What did we work on in October?", "what were the main themes last week?", "summarise our
conversations about the garden" ask about a period or a theme, not a fact: single turns
answer them badly. `classify` is the **broad-question heuristic** (English cue phrases, no
model): it fires on a summary or overview cue ("summarise", "recap", "overall", "main
themes", "how has X been going"), or on an activity cue about us over a period ("what
did we work on", "what have we been talking about", "what did I do" with a time window).
A question about a fact ("what is my locker code?", "when did Ana book the car?", "what
dinner did Elena cook in mid-June?") does not fire, so ordinary recall is untouched.

When it fires, `choose_nodes` picks RAPTOR nodes (levels 1 branch, 2 trunk, 3 canopy):
with a time window, the nodes most of whose blocks fall inside it (broadest first, or by
similarity when the question names a topic); without one, those nearest the topic, or
the most recent when it names none. A node is offered to a user only when every block
under it is theirs (or of no user).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import numpy as np

from agent.domain.lexical import STOPWORDS
from agent.domain.tables import scalar_fields
from agent.domain.timeref import TimeWindow

DETECTOR = "broad-question heuristic"
LEVEL_NAMES = {1: "branch", 2: "trunk", 3: "canopy"}  # seed 001 §5.4
Scope = Literal["period", "theme"]

_APOS = "'\u2019"
# "how has the garden been going?": broad only when it names a topic or a period ("how is
# it going?", "how has your day been going?" are greetings)
_HOW_GOING = (r"\bhow (?:has|have|is|are|was|were)\b(?:(?!\bgoing to\b).)* (?:been )?going\b"
              r"(?! to\b)")
# a summary or overview asked for: broad with or without a period
_THEME_CUES = [
    r"^(?:(?:can|could|would) you |please |now |ok(?:ay)?,? )*(?:summari[sz]e|recap|sum up)\b",
    r"\b(?:give|get|show) me (?:a|an|the) (?:quick |short |brief |rough )?"
    r"(?:summary|recap|overview|rundown|round-?up)\b",
    r"\b(?:a|an) (?:quick |short |brief )?(?:summary|recap|overview|rundown) of "
    r"(?:our|what|my|the (?:last|past)|this|last|everything)\b",
    r"^(?:so,? )?overall\b|\boverall,|\bon the whole\b|\bbig picture\b|\bin general,? how\b",
    r"\b(?:main|key|big|recurring|common) (?:themes?|topics?|threads?|subjects?)\b",
    r"\bwhat (?:themes|topics|subjects) (?:have|did|do|were|came|come)\b",
    _HOW_GOING,
    r"\b(?:catch|fill) me (?:up|in)\b",
    r"\bwhat(?:'s| has) been (?:going on|happening)\b",
    r"\bwhere (?:are|were) we (?:at )?with\b",
    r"\bwhat progress (?:have|did|has)\b",
    r"\b(?:our|my) (?:conversations|chats|discussions|talks) (?:about|on|regarding)\b",
    r"\b(?:everything|all) (?:that )?(?:we|i)(?:'ve| have)? (?:talked|discussed|said) about\b",
]
# an activity over a period, asked about us: broad with or without a window
_PERIOD_CUES = [
    r"\bwhat (?:did|have|had|were|are) (?:we|i|you and i)(?:'ve)? (?:been )?"
    r"(?:work(?:ed|ing)? on|talk(?:ed|ing)? about|discuss(?:ed|ing)?|chat(?:ted|ting)? about|"
    r"focus(?:s?ed|s?ing)? on|been up to|busy with)\b",
    r"\bwhat(?:'ve| have) (?:we|i) been (?:doing|up to|working on|talking about|busy with)\b",
    r"\bhow (?:was|has been) (?:my|our|the) (?:week|month|weekend|year|day|fortnight)\b",
]
# an activity cue that is broad only with a window ("what did I do last week?", not "what
# did I do with my keys?")
_WINDOWED_CUES = [
    r"\bwhat (?:did|have|had) (?:we|i|you and i) (?:do|done|get up to|gotten up to)\b",
    r"^what (?:has |have )?happened\b(?! to\b| with\b| at\b| between\b)",
]
_THEME, _PERIOD, _WINDOWED = (
    [re.compile(p, re.IGNORECASE) for p in group]
    for group in (_THEME_CUES, _PERIOD_CUES, _WINDOWED_CUES))
# words of the cues themselves: what is left of a question without them (and without
# stopwords) is its topic ("the garden", "the move"); none left: a question about a period
_CUE_WORD_TEXT = """
summarise summarize summary summarising summarizing recap sum overview rundown roundup round
overall whole big picture general main key recurring common theme themes topic topics
thread threads subject subjects going gone go catch fill progress conversations
conversation chats chat chatted chatting discussions discussion discuss discussed
discussing talks talk talked talking work worked working focus focused focusing busy
happened happening happen week month weekend year day fortnight quick short brief rough
give show everything lately recently been up made came come comes
hey hi hello
"""
CUE_WORDS = frozenset(_CUE_WORD_TEXT.split())
_WORDS = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclass(frozen=True)
class BroadQuestion:
    """The heuristic's decision on one question, as recorded with the recall."""

    fired: bool
    scope: Scope | None = None  # "period": it names a time window; "theme": it does not
    cue: str | None = None  # the words that fired it
    topic: tuple[str, ...] = ()  # its words beyond the cue, the time phrase and stopwords
    detector: str = DETECTOR

    def as_dict(self) -> dict[str, Any]:
        return {"fired": self.fired, "scope": self.scope, "cue": self.cue,
                "topic": list(self.topic), "detector": self.detector}


NOT_BROAD = BroadQuestion(fired=False)


def classify(question: str, window: TimeWindow | None = None,
             text_without_time: str | None = None) -> BroadQuestion:
    """Whether `question` asks about a period or a theme (the broad-question heuristic).

    `window`: the period it names (timeref.resolve); `text_without_time`: the question
    without that phrase (timeref's `text`), from which the topic words are taken."""
    flat = " ".join(question.split())
    for ch in _APOS[1:]:
        flat = flat.replace(ch, "'")
    rest = text_without_time if text_without_time is not None else flat
    topic = tuple(dict.fromkeys(
        w for w in (x.lower() for x in _WORDS.findall(rest))
        if len(w) > 1 and w not in STOPWORDS and w not in CUE_WORDS))
    cues = [p for p in _THEME + _PERIOD
            if p.pattern != _HOW_GOING or topic or window is not None]
    found = next((m for p in cues for m in [p.search(flat)] if m), None)
    if found is None and window is not None:
        found = next((m for p in _WINDOWED for m in [p.search(flat)] if m), None)
    if found is None:
        return NOT_BROAD
    return BroadQuestion(fired=True, scope="period" if window is not None else "theme",
                         cue=found.group(0).strip(), topic=topic)


@dataclass(frozen=True)
class BroadConfig:
    """[recall] broad_* keys (config/default.toml)."""

    broad_questions: bool  # the broad path at all
    broad_max_nodes: int  # RAPTOR nodes returned per question
    broad_budget_share: float  # of the recall token budget, at most, for the nodes
    broad_window_min_share: float  # of a node's blocks inside the asked window
    broad_min_similarity: float  # a node's summary to a topical question's topic words
    broad_similarity_margin: float  # ... and at most this far below the closest node
    broad_max_sources: int  # member blocks listed per node

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> BroadConfig:
        return cls(**scalar_fields(cls, t))


@dataclass(frozen=True)
class LeafBlock:
    """A cortex block as a node's member: when it happened, whose it is, its turns."""

    block_id: str
    start: datetime | None
    end: datetime | None
    user_id: str | None = None
    entry_ids: tuple[str, ...] = ()  # its source turns (flux_metrics.entry_ids)

    def inside(self, window: TimeWindow) -> bool:
        lo, hi = self.start or self.end, self.end or self.start
        return lo is not None and hi is not None and lo < window.end and hi >= window.start


@dataclass(frozen=True)
class ClusterNode:
    """A RAPTOR node as stage 8 writes it (cortex_clusters)."""

    cluster_id: str
    level: int
    summary: str
    member_ids: tuple[str, ...]  # block ids at level 1, node ids above
    leaf_count: int
    vector: Sequence[float] | None = None  # summary_vector (universal)


@dataclass(frozen=True)
class ChosenNode:
    node: ClusterNode
    leaves: list[LeafBlock]  # the blocks under it, in time order
    in_window: int  # how many of them fall in the asked window (all, without one)
    similarity: float | None = None  # its summary to the question's topic
    sources: list[LeafBlock] = field(default_factory=list)  # what is listed as sources


def leaf_ids(nodes: Sequence[ClusterNode]) -> dict[str, list[str]]:
    """Each node's blocks: level 1 members are blocks; above, the blocks of its members."""
    by_id = {n.cluster_id: n for n in nodes}
    out: dict[str, list[str]] = {}

    def walk(node: ClusterNode, depth: int) -> list[str]:
        if node.cluster_id in out:
            return out[node.cluster_id]
        got: list[str] = []
        for m in node.member_ids:
            child = by_id.get(m) if node.level > 1 else None
            got += walk(child, depth + 1) if child is not None and depth < 8 else (
                [] if node.level > 1 else [m])
        out[node.cluster_id] = sorted(set(got))
        return out[node.cluster_id]

    for n in nodes:
        walk(n, 0)
    return out


def _cosine(a: Sequence[float] | None, b: Sequence[float] | None) -> float | None:
    if a is None or b is None:
        return None
    x, y = np.asarray(a, np.float32), np.asarray(b, np.float32)
    den = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / den if den > 0 else None


def _when(leaf: LeafBlock) -> float:
    stamp = leaf.end or leaf.start
    return stamp.timestamp() if stamp is not None else 0.0


def choose_nodes(
    nodes: Sequence[ClusterNode], blocks: Mapping[str, LeafBlock], question: BroadQuestion,
    *, window: TimeWindow | None, query_vector: Sequence[float] | None, user_id: str | None,
    cfg: BroadConfig, skip: frozenset[str] = frozenset(),
) -> list[ChosenNode]:
    """The RAPTOR nodes (levels 1-3) that answer a broad question, best first.

    Eligible: every block under the node is `user_id`'s or of no user (any user when
    None; a node over a block that is gone, whose owner is unknown, is offered to no
    user), the node is not in `skip`. With a window: at least broad_window_min_share of
    its blocks inside it; ranked by similarity to the topic when the question names one,
    else broadest level first, then most blocks inside. Without a window: a topical
    question takes nodes at least broad_min_similarity close to its topic and at most
    broad_similarity_margin below the closest, most similar first; one without a topic,
    the most recent nodes. A node covering exactly the blocks
    of one already chosen (a single-child chain of the tree) is left out."""
    leaves_of = leaf_ids(nodes)
    topical = bool(question.topic) and query_vector is not None
    found: list[ChosenNode] = []
    for n in nodes:
        if not 1 <= n.level <= 3 or n.cluster_id in skip:
            continue
        ids = leaves_of.get(n.cluster_id, [])
        leaves = [blocks[b] for b in ids if b in blocks]
        if not leaves or (user_id is not None and (
                len(leaves) < len(ids)  # a block gone (forgotten): whose it was is unknown
                or any(b.user_id not in (None, user_id) for b in leaves))):
            continue
        leaves.sort(key=lambda b: (_when(b), b.block_id))
        inside = [b for b in leaves if window is None or b.inside(window)]
        if window is not None and len(inside) < cfg.broad_window_min_share * len(leaves):
            continue
        sim = _cosine(n.vector, query_vector) if topical else None
        if window is None and topical and (sim is None or sim < cfg.broad_min_similarity):
            continue
        found.append(ChosenNode(n, leaves, len(inside), sim,
                                inside[-max(1, cfg.broad_max_sources):]))
    if topical:
        found.sort(key=lambda c: (-(c.similarity or 0.0), -c.node.level, c.node.cluster_id))
        if window is None and found:
            top = found[0].similarity or 0.0
            found = [c for c in found
                     if (c.similarity or 0.0) >= top - cfg.broad_similarity_margin]
    elif window is not None:
        found.sort(key=lambda c: (-c.node.level, -c.in_window, c.node.cluster_id))
    else:
        found.sort(key=lambda c: (-_when(c.leaves[-1]), -c.node.level, c.node.cluster_id))
    chosen: list[ChosenNode] = []
    seen: set[tuple[str, ...]] = set()
    for c in found:
        key = tuple(b.block_id for b in c.leaves)
        if key in seen:
            continue
        seen.add(key)
        chosen.append(c)
        if len(chosen) >= cfg.broad_max_nodes:
            break
    return chosen


def node_text(c: ChosenNode) -> str:
    """What the prompt shows of a node: its level, its span in time, its summary."""
    dates = [d for b in c.leaves for d in (b.start, b.end) if d is not None]
    span = (f", {min(dates):%d %b %Y} to {max(dates):%d %b %Y}" if dates else "")
    level = LEVEL_NAMES.get(c.node.level, str(c.node.level))
    summary = " ".join(c.node.summary.split())
    return (f"Summary of {len(c.leaves)} conversation block(s) (RAPTOR level {c.node.level}, "
            f"{level}{span}): {summary}")


def node_sources(c: ChosenNode, window: TimeWindow | None) -> list[dict[str, Any]]:
    """The member blocks listed as a node's sources: id, dates, source turns."""
    return [{"block_id": b.block_id,
             "start": None if b.start is None else b.start.isoformat(),
             "end": None if b.end is None else b.end.isoformat(),
             "in_window": None if window is None else b.inside(window),
             "entry_ids": list(b.entry_ids)} for b in c.sources]
