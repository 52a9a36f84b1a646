"""Episodes, milestones and timeline questions (issue 42 item 4; seed 000 §4.3, §4.6.3):
pure rules, no database.

- `segment`: one user's blocks, in time order, cut into episodes: the EPISODE_HEURISTIC
  (a new episode at a new UTC day, at a gap longer than `gap_hours`, or where a block's
  vector is further than `min_similarity` from the running episode's centroid: a topic
  shift). Limits: days are UTC days, not the user's; an episode never spans two days
  (a topic over several days is one episode per day); the topic cut needs vectors that
  separate topics (the bundled offline embedder does this only roughly).
- `salient_terms` / `heuristic_title`: the TITLE_HEURISTIC when no LLM titles the episode:
  the most frequent content words of the user's turns (a stop list, words of 3+ letters,
  capitalised names weighted up), joined. It names topics, never what happened.
- `milestones`: the MILESTONE_HEURISTIC over the user's turns: a first mention of a
  capitalised name (a person, a place or a project: any capitalised word not at a
  sentence start and not on the stop list; a name seen before in the same user's
  milestones is not first, which the caller's unique key decides), a decision ("I
  decided", "we chose", "I'm going to"), a move or change of life ("I moved to", "new
  job", "started at"), and an important or emotional event (a turn whose memory has
  importance >= `event_importance`, or strong-emotion words). English only.
- `timeline_question`: whether a chat message asks what happened in a period ("what
  happened in October?", "what did I do last month", "recap of September 2026") and the
  period: agent/domain/timeref.py's window (one month, "last month", a date...), or an
  explicit "between DATE and DATE" / "from DATE to DATE" range (ISO dates).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import numpy as np

from agent.domain import timeref
from agent.domain.tables import need

EPISODE_HEURISTIC = "day/gap/topic-shift segmentation heuristic"
TITLE_HEURISTIC = "salient-terms title heuristic"
MILESTONE_HEURISTIC = "cue-phrase milestone heuristic"

STOP = frozenset(" ".join("""
a about above after again against all also am an and any are aren as at be because been
before being below between both but by can cannot could couldn did didn do does doesn doing
don down during each few for from further had hadn has hasn have haven having he her here
hers herself him himself his how i if in into is isn it its itself just let ll me more most
my myself no nor not now of off on once only or other ought our ours ourselves out over own
re same she should shouldn so some such than that the their theirs them themselves then there
these they this those through to too under until up us ve very was wasn we were weren what
when where which while who whom why will with won would wouldn you your yours yourself
yourselves yes yeah ok okay really think know like get got going go went want thing things
something anything one two also well still maybe much many lot lots today yesterday tomorrow
time day week month year good great nice sure thanks thank please hi hello hey im ive its dont
didnt cant wont thats whats tell said say says told make made way back new just need
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday assistant user
""".splitlines()).split())
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]{2,}")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?)\b")
DECISION = re.compile(
    r"\b(?:i|we)\s+(?:have\s+|'ve\s+|just\s+|finally\s+)?(?:decided|chose|picked|"
    r"settled on|committed to)\b|\b(?:i'm|i am|we're|we are)\s+going\s+to\b"
    r"|\bmy decision\b", re.I)
MOVE = re.compile(
    r"\b(?:i|we)\s+(?:just\s+|finally\s+)?(?:moved|relocated)\b|\bmoving to\b"
    r"|\b(?:new|first day at (?:my|the) new)\s+job\b|\bstarted (?:at|working at|a new)\b"
    r"|\bgot (?:married|engaged|promoted|hired)\b|\bquit my job\b|\bhad a baby\b", re.I)
EMOTION = re.compile(
    r"\b(?:devastated|thrilled|ecstatic|heartbroken|terrified|overjoyed|furious|"
    r"best day|worst day|so happy|so sad|passed away|died|funeral|hospital|accident)\b",
    re.I)
_TIMELINE_CUE = re.compile(
    r"\bwhat\s+(?:all\s+)?(?:happened|went on|was going on|did (?:i|we) (?:do|talk about|"
    r"discuss)|have i been up to|was i up to|did we cover)\b|\btimeline\b|\brecap\b"
    r"|\bsummar(?:y|ise|ize) (?:of )?(?:what|my|our)\b", re.I)
_RANGE = re.compile(
    r"\b(?:between|from)\s+(\d{4}-\d{2}-\d{2})\s+(?:and|to|until|-)\s+(\d{4}-\d{2}-\d{2})\b",
    re.I)


@dataclass(frozen=True)
class Piece:
    """One block of a user's conversation, as episodes are cut from them."""

    id: str
    session_id: str
    start: datetime
    end: datetime
    vector: np.ndarray[Any, Any] | None
    entry_ids: tuple[str, ...] = ()


@dataclass
class Segment:
    pieces: list[Piece] = field(default_factory=list)

    @property
    def start(self) -> datetime:
        return min(p.start for p in self.pieces)

    @property
    def end(self) -> datetime:
        return max(p.end for p in self.pieces)


@dataclass(frozen=True)
class EpisodeConfig:
    """[night_cycle] episode_* and milestone_event_importance (stage 11)."""

    gap_hours: float
    min_similarity: float
    title_terms: int
    event_importance: float

    @classmethod
    def from_table(cls, table: Mapping[str, Any]) -> EpisodeConfig:
        return cls(gap_hours=float(need(table, "episode_gap_hours")),
                   min_similarity=float(need(table, "episode_min_similarity")),
                   title_terms=int(need(table, "episode_title_terms")),
                   event_importance=float(need(table, "milestone_event_importance")))


def segment(pieces: Sequence[Piece], cfg: EpisodeConfig) -> list[Segment]:
    """The EPISODE_HEURISTIC over one user's pieces (any order): a new segment at a new
    UTC day, a gap over cfg.gap_hours, or a topic shift (cosine to the running centroid
    under cfg.min_similarity)."""
    out: list[Segment] = []
    centroid: np.ndarray[Any, Any] | None = None
    for p in sorted(pieces, key=lambda p: (p.start, p.id)):
        cur = out[-1] if out else None
        new = cur is None
        if cur is not None:
            last = cur.end
            day_or_gap = (p.start.astimezone(UTC).date() != last.astimezone(UTC).date()
                          or (p.start - last).total_seconds() > cfg.gap_hours * 3600)
            if day_or_gap:
                new = True
            elif centroid is not None and p.vector is not None:
                sim = float(np.dot(_unit(centroid), _unit(p.vector)))
                new = sim < cfg.min_similarity
        if new:
            out.append(Segment([p]))
            centroid = None if p.vector is None else p.vector.astype(np.float64)
        else:
            out[-1].pieces.append(p)
            if p.vector is not None:
                centroid = (p.vector.astype(np.float64) if centroid is None
                            else centroid + p.vector)
    return out


def _unit(v: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    n = float(np.linalg.norm(v))
    return v if n == 0 else v / n


def salient_terms(texts: Sequence[str], k: int = 3) -> list[str]:
    """The TITLE_HEURISTIC's terms: the k most frequent content words (names count
    double), in their most common spelling."""
    counts: Counter[str] = Counter()
    spelling: dict[str, Counter[str]] = {}
    for text in texts:
        names = {m.group(1).split()[0].lower() for m in _NAME.finditer(text)}
        for w in _WORD.findall(text):
            key = w.lower().strip("'-")
            if key in STOP or len(key) < 3 or (key.endswith("'s") and key[:-2] in STOP):
                continue
            key = key.removesuffix("'s")
            counts[key] += 2 if key in names else 1
            spelling.setdefault(key, Counter())[w.removesuffix("'s")] += 1
    return [spelling[w].most_common(1)[0][0] for w, _ in
            sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def heuristic_title(terms: Sequence[str]) -> str:
    return ", ".join(terms) if terms else "conversation"


@dataclass(frozen=True)
class TurnText:
    entry_id: str
    at: datetime
    content: str
    importance: float | None = None  # of the memory made from the turn, if any


@dataclass(frozen=True)
class Milestone:
    kind: str  # first_mention | decision | move | event
    key: str  # what makes it unique per user (a name, or the turn id)
    content: str
    at: datetime
    importance: float
    entry_id: str


def milestones(turns: Sequence[TurnText], cfg: EpisodeConfig) -> list[Milestone]:
    """The MILESTONE_HEURISTIC over one episode's user turns (in time order)."""
    out: list[Milestone] = []
    seen: set[str] = set()
    for t in sorted(turns, key=lambda t: t.at):
        text = " ".join(t.content.split())
        short = text if len(text) <= 240 else text[:237] + "..."
        for m in _NAME.finditer(text):
            name = m.group(1)
            key = name.lower()
            if key in seen or any(w.lower() in STOP for w in name.split()):
                continue
            seen.add(key)
            out.append(Milestone("first_mention", key, f"first mention of {name}: {short}",
                                 t.at, 0.6, t.entry_id))
        if MOVE.search(text):
            out.append(Milestone("move", t.entry_id, short, t.at, 0.8, t.entry_id))
        elif DECISION.search(text):
            out.append(Milestone("decision", t.entry_id, short, t.at, 0.7, t.entry_id))
        elif (t.importance is not None and t.importance >= cfg.event_importance) \
                or EMOTION.search(text):
            out.append(Milestone("event", t.entry_id, short, t.at,
                                 max(0.7, t.importance or 0.0), t.entry_id))
    return out


@dataclass(frozen=True)
class TimelineAsk:
    start: datetime
    end: datetime  # exclusive
    phrase: str


def timeline_question(text: str, now: datetime) -> TimelineAsk | None:
    """The period a "what happened in <period>?" message asks about, or None (no
    timeline cue, or no period)."""
    if not _TIMELINE_CUE.search(text):
        return None
    m = _RANGE.search(text)
    if m:
        try:
            a, b = date.fromisoformat(m.group(1)), date.fromisoformat(m.group(2))
        except ValueError:
            return None
        if b < a:
            a, b = b, a
        tz = now.tzinfo or UTC
        return TimelineAsk(datetime.combine(a, time(), tz),
                           datetime.combine(b + timedelta(days=1), time(), tz), m.group(0))
    window = timeref.resolve(text, now).window
    if window is None:
        return None
    return TimelineAsk(window.start, window.end, window.phrase)
