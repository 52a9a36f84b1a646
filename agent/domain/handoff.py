"""Session handoff rules (seed 000 §5.1-5.4, §7): the gap mode, the handoff block within a
token budget, the extractive continuation note, correction lines and when a correction
applies, and when a later turn shows an intention done.

Pure functions over plain values: no database, no clock (the caller passes times and
similarities). Heuristics, named as such where their output is stored:
- the continuation note without a real LLM: "extractive-heuristic" (the session's last
  substantive user messages and its open intentions, quoted, never rewritten);
- an intention's fulfilment without a real LLM: "completion-heuristic" (a completion cue,
  negation- and tense-aware, in a turn similar to the intention);
- a correction applies when the query is similar to it or shares words with its
  fails_when ("word overlap" is a heuristic; the similarity is seed 000 §5.4.1's).
Recalled and user-derived text in a line made here (notes, intentions, corrections, brief
excerpts, handoff items) is neutralised before its newlines are folded, and flagged
(agent/domain/quoting.py `quoted_line`; issue 38 finding 6).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.domain.budget import fit_lines
from agent.domain.quoting import quoted_line

# seed 000 §5.3: the gap since the last session decides the greeting
GAP_MODES = ("instant_resume", "continuation", "fresh_start", "catch_up", "check_in")
MODE_BEHAVIOUR = {
    "instant_resume": "skip pleasantries, continue from the last point",
    "continuation": "brief acknowledgment, pick up the work",
    "fresh_start": "check in, reference the last session",
    "catch_up": "warmer greeting, surface the accumulated items",
    "check_in": "express concern, proactively review the stale items",
}
NOTE_DETECTOR = "extractive-heuristic"
COMPLETION_DETECTOR = "completion-heuristic"


def gap_mode(gap_minutes: float, bounds: Sequence[float]) -> str:
    """The seed 000 §5.3 mode for a gap: `bounds` are the upper ends (minutes) of instant
    resume, continuation, fresh start and catch-up ([30, 240, 1440, 2880]); longer is a
    check-in."""
    if len(bounds) != len(GAP_MODES) - 1:
        raise ValueError(f"gap bounds need {len(GAP_MODES) - 1} values, got {list(bounds)}")
    for mode, upper in zip(GAP_MODES, bounds, strict=False):
        if gap_minutes < upper:
            return mode
    return GAP_MODES[-1]


def human_gap(minutes: float) -> str:
    """'12 minutes', '3 hours', '1 day', '2 days'."""
    if minutes < 90:
        n, unit = round(minutes), "minute"
    elif minutes < 36 * 60:
        n, unit = round(minutes / 60), "hour"
    else:
        n, unit = round(minutes / 1440), "day"
    return f"{n} {unit}{'' if n == 1 else 's'}"


def one_line(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class HandoffItem:
    """One line of the handoff: what it is, its id, what it came from, its text."""

    kind: str  # note | intention | correction | brief | overnight
    id: str
    text: str
    source_ids: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "source_ids": list(self.source_ids),
                "text": self.text}


def render_handoff(
    mode: str | None, gap_minutes: float | None, items: Sequence[HandoffItem],
    max_tokens: int, count_tokens: Callable[[str], int],
) -> tuple[str, list[HandoffItem]]:
    """The handoff block and the items that fit `max_tokens` (in the given order, the most
    important first; the first item that does not fit ends the block with a cut mark)."""
    if mode is None or gap_minutes is None:
        head = "First session with this user."
    else:
        head = (f"Last session: {human_gap(gap_minutes)} ago "
                f"({mode.replace('_', ' ')}: {MODE_BEHAVIOUR[mode]}).")
    return fit_lines([head], [(f"- {quoted_line(item.text, 400)}", item) for item in items],
                     max_tokens, count_tokens, "handoff")


# --- the continuation note ---------------------------------------------------------

_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_STOP = frozenset({
    "the", "and", "for", "with", "that", "this", "from", "have", "has", "had", "you", "your",
    "are", "was", "were", "will", "would", "can", "could", "should", "what", "when", "where",
    "which", "who", "how", "why", "not", "but", "its", "it's", "about", "into", "over", "just",
    "also", "then", "than", "there", "here", "they", "them", "their", "our", "ours", "yes",
    "okay", "thanks", "thank", "please", "hello", "bye", "see",
    # the stems of negated contractions ("don't" reads as "don") and everyday verbs and
    # quantifiers: two of them shared say nothing about the topic ("I don't need that" vs
    # a correction that fails when "you don't need the lock file")
    "don", "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "haven", "hasn",
    "hadn", "shouldn", "wouldn", "couldn", "does", "did",
    "doing", "done", "been", "being", "need", "needs", "want", "wants", "use", "using",
    "used", "make", "get", "got", "let", "like", "know", "think", "some", "any", "all",
    "more", "most", "much", "many", "very", "only", "now", "one", "out", "off", "again",
    "still", "even", "well", "back", "really", "thing", "things", "something", "way",
    "other", "these", "those", "such", "same", "each", "every"
})


def content_words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP}


def substantive(text: str, min_words: int = 3) -> bool:
    """A message with at least `min_words` content words (not "ok", "thanks", "hi")."""
    return len(content_words(text)) >= min_words


def extractive_note(user_messages: Sequence[str], intentions: Sequence[str],
                    k: int = 3) -> str | None:
    """The extractive-heuristic note: the last `k` substantive user messages (oldest
    first) and the open intentions, quoted; None when there is nothing substantive."""
    picked = [m for m in user_messages if substantive(m)][-k:]
    if not picked and not intentions:
        return None
    parts = []
    if picked:
        parts.append("The user was on: "
                     + " / ".join(f'"{quoted_line(m, 200)}"' for m in picked))
    if intentions:
        parts.append("Left open: " + " / ".join(f'"{quoted_line(i, 160)}"' for i in intentions))
    return ". ".join(parts) + "."


# --- corrections -------------------------------------------------------------------


def correction_line(content: str, fails_when: str | None, fine_when: str | None,
                    memory_id: str) -> str:
    """'Correction: X — fails when A; fine when B [memory:id]'."""
    conds = []
    if fails_when:
        conds.append(f"fails when {quoted_line(fails_when, 160)}")
    if fine_when:
        conds.append(f"fine when {quoted_line(fine_when, 160)}")
    tail = f" — {'; '.join(conds)}" if conds else ""
    return f"Correction: {quoted_line(content, 300)}{tail} [memory:{memory_id}]"


def shared_words(query: str, fails_when: str | None) -> int:
    """How many content words of `fails_when` the query has (0 without one)."""
    if not fails_when:
        return 0
    return len(content_words(query) & content_words(fails_when))


def correction_applies(similarity: float, min_similarity: float, shared: int,
                       min_shared: int) -> bool:
    """seed 000 §5.4.1: cosine > 0.35 to the correction; or (word-overlap heuristic) the
    query shares `min_shared` content words with its fails_when."""
    return similarity > min_similarity or (min_shared > 0 and shared >= min_shared)


# --- intentions: done or not -------------------------------------------------------

_CUE = re.compile(
    r"\b(done|finished|completed|complete|sent|booked|fixed|shipped|submitted|paid|"
    r"bought|delivered|deployed|merged|published|resolved|sorted|wrapped up|"
    r"took care of|taken care of|handled|i did|we did|did it|got it done)\b", re.I)
# past tense after "I"/"we": "I emailed", "we renewed" (not "I needed to", "I wanted")
_PAST = re.compile(r"\b(?:i|we)\s+(?:(?:have|'ve|just|already|finally|actually|also)\s+)*"
                   r"([a-z]{3,}ed)\b(?!\s+to\b)", re.I)
_NOT_DONE_VERBS = frozenset({"needed", "wanted", "planned", "decided", "intended", "tried",
                             "hoped", "forgot", "started", "wondered", "expected",
                             "promised", "agreed", "offered", "considered", "scheduled",
                             # noticing, asking or talking about it is not doing it
                             "noticed", "realized", "realised", "remembered", "asked",
                             "mentioned", "discussed", "talked", "worried", "assumed",
                             "guessed", "imagined", "suggested", "wished", "struggled",
                             # putting it off or giving it up is not doing it either
                             "missed", "failed", "postponed", "delayed", "rescheduled",
                             "cancelled", "canceled", "skipped", "ignored", "dropped",
                             "procrastinated", "hesitated"})
_NEGATION = re.compile(
    r"\b(not|never|no|haven'?t|hasn'?t|hadn'?t|didn'?t|isn'?t|wasn'?t|aren'?t|weren'?t|"
    r"won'?t|can'?t|couldn'?t|yet to|forgot to|still need|still have to|need to|have to|"
    r"will|going to|gonna|'ll|should|might|if|when)\b|n't\b", re.I)
_AFTER_NEGATION = re.compile(r"^\W*(?:\w+\W+){0,2}?(yet|later|soon|tomorrow)\b", re.I)
_CLAUSE = re.compile(r"[.;,!\n]+|\b(?:but|though|although)\b", re.I)


def completion_cue(text: str) -> str | None:
    """The cue that says something was done ("sent", "booked", "I did", "I emailed"), or
    None (completion heuristic). Negation-, question- and tense-aware per clause: "I
    haven't sent it", "did you send it?", "I'll be done tomorrow", "not done yet" are
    no completion."""
    for clause in _CLAUSE.split(text):
        for sub in re.split(r"(?<=\?)", clause):
            if sub.rstrip().endswith("?"):
                continue  # a question asks, it does not report
            cue = _clause_cue(sub)
            if cue:
                return cue
    return None


def _clause_cue(clause: str) -> str | None:
    hits = [(m.start(), m.end(), m.group(1).lower()) for m in _CUE.finditer(clause)]
    hits += [(m.start(1), m.end(1), m.group(1).lower()) for m in _PAST.finditer(clause)
             if m.group(1).lower() not in _NOT_DONE_VERBS]
    for start, end, cue in sorted(hits):
        if _NEGATION.search(clause[:start]):
            continue
        if _AFTER_NEGATION.match(clause[end:]):
            continue
        return cue
    return None


def fulfils(similarity: float, cue: str | None, min_similarity: float) -> bool:
    """The completion heuristic: a completion cue in a turn similar to the intention."""
    return cue is not None and similarity >= min_similarity


def intention_line(kind: str, content: str, carried: int, overdue_after: int,
                   intention_id: str) -> str:
    """How an open intention reads in the prompt (overdue ones flagged, seed 000 §5.2)."""
    flag = f", OVERDUE: carried {carried} sessions" if carried >= overdue_after else (
        f", carried {carried} session{'' if carried == 1 else 's'}" if carried else "")
    return f"Open {kind}{flag}: {quoted_line(content, 240)} [intention:{intention_id}]"


def block_excerpt(prose: dict[str, Any], n: int = 280) -> str:
    """A holographic block's first live zone (or dead-zone summary), one line."""
    zones = prose.get("live_zones") or prose.get("dead_zone_summaries") or []
    text = (zones[0].get("content") or zones[0].get("summary")) if zones else ""
    return quoted_line(str(text or ""), n)
