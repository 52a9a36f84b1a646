"""Knowledge updates as claim slots (issue 39 item 5; seed 004, Personal Model: "active
facts, retired/disputed claims").

A memory that says where its speaker lives, what their job is, who their partner is or
what their plan is, is a claim on that slot. A newer claim on the same slot of the same
subject retires the older one: the old claim is kept, marked retired and linked to the
memory that replaced it (agent/services/memory/claims.py, table `claims`, revision 0022).

`detect` is the SLOT_HEURISTIC: a small set of first-person English patterns, named as a
heuristic, not a model. It skips questions ("Do I live in Berlin?"), negated and
hypothetical statements ("I don't live in...", "if I moved to...") and past states ("I
used to live in..."); what it misses is simply no claim (the memory is kept as it is).

`claim_factor` is recall's demotion of a claim that was not valid at the time a question
asks about: by default the present, so a retired claim ranks below the current one; for
a question about the past ("where did I live before?", "used to", "originally"), the
current claim that replaced an older one ranks below it; for a question naming a period
("in May"), the claims whose validity [valid_from, retired_at) misses the period. A
claim that never had a rival is never demoted. When the question names the time (a past
cue, a current-state cue, a period), the rival valid then is raised by as much (2 -
weight). A factor, never a filter: the demoted claim is still found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from agent.domain.timeref import TimeWindow

SLOT_HEURISTIC = "heuristic:claim-slots-v1"
SLOTS = ("residence", "job", "partner", "plan")

_NAME = r"(?-i:[A-Z][\w'-]*)"  # a capitalised name, whatever the pattern's flags
_VALUE = r"(?P<v>[^.,;!?\n]{1,80})"
_NOW = r"(?:now\s+|currently\s+|still\s+|finally\s+|just\s+|recently\s+)?"
_AM = r"(?:'m|\u2019m|\s+am)"
_HAVE = r"(?:'ve|\u2019ve|\s+have)?"
_PARTNER = r"(?:partner|boyfriend|girlfriend|husband|wife|fianc[eé]e?|spouse)"
PATTERNS: dict[str, tuple[str, ...]] = {
    "residence": (
        rf"\bI\s+{_NOW}(?:live|reside)\s+in\s+{_VALUE}",
        rf"\bI{_AM}\s+{_NOW}(?:living|based|settled)\s+in\s+{_VALUE}",
        rf"\bI{_HAVE}\s+{_NOW}(?:moved|relocated)\s+(?:back\s+)?to\s+{_VALUE}",
        rf"\bmy\s+(?:new\s+)?(?:home|place|address)\s+is\s+(?:now\s+)?in\s+{_VALUE}",
    ),
    "job": (
        rf"\bI\s+{_NOW}work\s+(?:as|at|for)\s+{_VALUE}",
        rf"\bI{_AM}\s+{_NOW}working\s+(?:as|at|for)\s+{_VALUE}",
        rf"\bI{_HAVE}\s+{_NOW}(?:started|got|took|landed|accepted)\s+(?:a\s+|the\s+)?(?:new\s+)?"
        rf"(?:job|position|role)\s+(?:as|at|with)\s+{_VALUE}",
        rf"\bmy\s+(?:new\s+)?(?:job|position|role)\s+is\s+(?:now\s+)?{_VALUE}",
    ),
    "partner": (
        rf"\bI{_AM}\s+{_NOW}(?:married|engaged)\s+to\s+(?P<v>{_NAME}(?:\s+{_NAME})?)",
        rf"\bI{_AM}\s+{_NOW}(?:dating|seeing)\s+(?P<v>{_NAME}(?:\s+{_NAME})?)",
        rf"\bI\s+{_NOW}married\s+(?P<v>{_NAME}(?:\s+{_NAME})?)",
        rf"\bmy\s+(?:new\s+)?{_PARTNER}(?:'s\s+name)?\s+is\s+(?P<v>{_NAME}(?:\s+{_NAME})?)",
        rf"\bmy\s+(?:new\s+)?{_PARTNER},?\s+(?P<v>{_NAME})",
    ),
    "plan": (
        rf"\b(?:my|our|the)\s+(?:new\s+)?plan\s+is\s+(?:now\s+)?to\s+{_VALUE}",
        rf"\b(?:new\s+plan|change\s+of\s+plans?)\s*[:,-]\s*{_VALUE}",
        rf"\bI{_HAVE}\s+changed\s+(?:my|our)\s+plans?\s*[:,-]?\s*(?:now\s+)?"
        rf"(?:I{_AM}\s+|I\s+will\s+|I'll\s+|we're\s+)?{_VALUE}",
        rf"\bI{_AM}\s+{_NOW}(?:planning|going)\s+to\s+(?P<v>[^.,;!?\n]{{1,80}}?)\s+instead\b",
    ),
}
_COMPILED = {slot: tuple(re.compile(p, re.IGNORECASE) for p in ps)
             for slot, ps in PATTERNS.items()}
# before the match, in its sentence: the statement is negated, hypothetical or wished for
_HEDGE = re.compile(
    r"\b(?:if|would|might|could|maybe|perhaps|wish|hope|dream|should|whether|not|never|"
    r"don't|do\s+not|didn't|no\s+longer|want(?:s|ed)?\s+to|thinking\s+(?:about|of)|"
    r"considering|used\s+to|when)\b", re.IGNORECASE)
# where a value ends: the time, reason or company words after the place, job or name
_VALUE_END = re.compile(
    r"\s+(?:since|for|with|and|but|because|as\s+of|last|this|next|now|anymore|these\s+days|"
    r"recently|a\s+few|two|three|about|ago|today|yesterday|who|which|where|so)\b.*$",
    re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?\n]")
MAX_VALUE_WORDS = 6


@dataclass(frozen=True)
class SlotClaim:
    slot: str
    value: str  # the place, job, name or plan, as said
    start: int  # where the statement starts in the text


def _sentence(text: str, start: int, end: int) -> tuple[str, str]:
    """The text of the match's sentence before it, and the sentence's closing mark."""
    before = text[:start]
    cut = max((m.end() for m in _SENTENCE_END.finditer(before)), default=0)
    after = _SENTENCE_END.search(text, end)
    return before[cut:], after.group(0) if after else ""


def _value(raw: str) -> str:
    value = _VALUE_END.sub("", " ".join(raw.split())).strip(" \"'()-:")
    return " ".join(value.split()[:MAX_VALUE_WORDS])


def detect(text: str) -> list[SlotClaim]:
    """The slots a first-person statement fills (SLOT_HEURISTIC): at most one claim per
    slot, the last statement in the text ("I lived in Berlin, then I moved to Lisbon")."""
    found: dict[str, SlotClaim] = {}
    for slot, patterns in _COMPILED.items():
        for pattern in patterns:
            for m in pattern.finditer(text):
                before, mark = _sentence(text, m.start(), m.end())
                if mark == "?" or _HEDGE.search(before):
                    continue
                value = _value(m.group("v"))
                if not value:
                    continue
                if slot not in found or m.start() >= found[slot].start:
                    found[slot] = SlotClaim(slot, value, m.start())
    return [found[s] for s in SLOTS if s in found]


def same_value(a: str, b: str) -> bool:
    """Whether two values of a slot say the same thing ("Berlin" / "berlin")."""
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


@dataclass(frozen=True)
class ClaimState:
    """What recall needs of a candidate's claim (a memory's, or its source turn's)."""

    status: str  # current | retired
    valid_from: datetime
    retired_at: datetime | None
    replaced: bool  # a current claim that retired an earlier one

    @property
    def rivalled(self) -> bool:
        """Whether the slot had another claim: only then is one of them the wrong one."""
        return self.status == "retired" or self.replaced


def valid_during(claim: ClaimState, window: TimeWindow) -> bool:
    """Whether the claim held at some point of the window: [valid_from, retired_at)."""
    return claim.valid_from < window.end and (
        claim.retired_at is None or claim.retired_at > window.start)


def claim_factor(claim: ClaimState, window: TimeWindow | None, asks_past: bool,
                 asks_current: bool, weight: float) -> float:
    """`weight` ([recall] retired_claim_weight) for a rivalled claim not valid at the time
    the question asks about (see the module's docstring); 2 - weight for the one valid
    then when the question names that time ("now", "before", "in May"): a question about
    a slot's state at a time is answered by the claim that held then, above a statement
    that merely shares its words ("My sister lives in Munich" for "where did I live
    before?"); 1 otherwise."""
    if not claim.rivalled:
        return 1.0
    if window is not None:
        valid = valid_during(claim, window)
    else:
        valid = claim.status == ("retired" if asks_past else "current")
    if not valid:
        return weight
    return 2.0 - weight if (window is not None or asks_past or asks_current) else 1.0
