"""Predictions (seed 000 §10.3): explicit, dated expectations in a turn, and the turn that
later settles one. Plain rules over text; the service (agent/services/thinking/predictions.py)
asks the consolidation role's LLM instead when that role routes to a real provider.

- "prediction-cue-heuristic": a sentence is a prediction when it carries an expectation
  frame ("I expect", "I bet", "I predict", "my guess is") or a hedge ("probably",
  "definitely", "might") or a belief frame ("I think", "I'm sure") together with a
  future marker ("will", "going to", "won't", "by June"), and is not a question ("will
  you ...?"), a conditional or hypothetical ("if ...", "would"), a report of the past
  ("I expected"), or the speaker's own plan without a frame ("I will send it").
- Confidence from the strongest hedge word (config levels: certain / likely / default /
  possible / unlikely); the deadline from agent/domain/deadlines.py.
- Domain: the model domains (revision 0015), by keywords ("domain-keyword-heuristic");
  'general' when none fits.
- "outcome-cue-heuristic": a later turn settles a prediction it is close to when it
  reports how things turned out: a quantity check first ("will take two weeks" against
  "took three weeks": the same unit, another number → wrong; the same number →
  correct), then what the turn says of the prediction ("partly" → partially_correct,
  "as expected", "you were right" → correct, "I was wrong" → wrong), then what it says
  happened, against the prediction's polarity: "on time", "it did" → correct and
  "took longer", "late", "failed", "didn't" → wrong for a plain prediction, the other
  way round for one of a failure or delay ("will fail" / "it failed") or a negated one
  ("won't call" / "she didn't call").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from agent.domain.deadlines import Deadline, deadline_or_default
from agent.domain.timeref import FUZZY_COUNTS, NUMBER_WORDS

PREDICTION_DETECTOR = "prediction-cue-heuristic"
SETTLEMENT_DETECTOR = "outcome-cue-heuristic"
DOMAIN_DETECTOR = "domain-keyword-heuristic"
Status = Literal["correct", "wrong", "partially_correct"]
_I = re.IGNORECASE

# hedge words → a confidence level named in [predictions] (config holds the numbers)
HEDGES: dict[str, tuple[str, ...]] = {
    "certain": ("definitely", "certainly", "surely", "for sure", "no doubt", "without a doubt",
                "guaranteed", "i'm sure", "i am sure", "i'm certain", "i am certain",
                "i'm confident", "i am confident", "bound to", "100%"),
    "likely": ("probably", "likely", "most likely", "i bet", "i'd bet", "chances are",
               "odds are", "i expect", "i predict", "i'm pretty sure", "pretty sure"),
    "possible": ("might", "may", "could", "possibly", "perhaps", "maybe", "i suspect",
                 "there's a chance", "there is a chance"),
    "unlikely": ("unlikely", "i doubt", "doubtful", "probably not"),
}
# frames that make a sentence a prediction by themselves ("I expect the release to slip")
_STRONG = re.compile(r"\b(?:i|we)\s+(?:(?:really|fully|kind\s+of)\s+)?(?:expect|predict|bet|"
                     r"forecast|anticipate)\b|\bi'd\s+bet\b|\b(?:my|our)\s+(?:bet|guess|"
                     r"prediction|forecast)\s+is\b|\bchances\s+are\b|\bodds\s+are\b", _I)
# belief frames and hedges: a prediction with a future marker
_WEAK = re.compile(r"\b(?:i|we)\s+(?:think|reckon|guess|suspect|believe|doubt|feel\s+like)\b|"
                   r"\bi'?m\s+(?:pretty\s+|fairly\s+|quite\s+)?(?:sure|certain|confident)\b|"
                   r"\bi\s+am\s+(?:pretty\s+|fairly\s+|quite\s+)?(?:sure|certain|confident)\b|"
                   r"\b(?:probably|likely|unlikely|definitely|certainly|surely|possibly|"
                   r"perhaps|maybe|bound\s+to)\b", _I)
_FUTURE = re.compile(r"\b(?:will|won't|wont|shall|going\s+to|gonna|is\s+about\s+to|"
                     r"by\s+(?:then|next|the\s+end|tomorrow|\w+day|january|february|march|"
                     r"april|may|june|july|august|september|october|november|december))\b|"
                     r"'ll\b", _I)
_QUESTION_START = re.compile(r"^\s*(?:will|would|do|does|did|is|are|was|were|can|could|"
                             r"should|shall|may|might|have|has|what|when|why|how|who|which|"
                             r"where|whether)\b", _I)
_CONDITIONAL = re.compile(r"\b(?:if|unless|whether|suppose|supposing|assuming|in\s+case|"
                          r"would|wouldn't|what\s+if|imagine)\b", _I)
# "I will send it", "we're going to move": a plan (an intention), not a prediction
_OWN_PLAN = re.compile(r"^\s*(?:(?:and|so|then|ok|okay)\s+)?(?:i|we)(?:\s+will|'ll|\s+shall|"
                       r"\s+am\s+going\s+to|'m\s+going\s+to|\s+are\s+going\s+to|'re\s+going\s+to"
                       r"|\s+won't)\b", _I)
_PAST_FRAME = re.compile(r"\b(?:i|we)\s+(?:expected|predicted|thought|guessed|assumed)\b",
                         _I)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")

# model domains (revision 0015) by keywords: the first that matches, in this order
DOMAIN_WORDS: tuple[tuple[str, str], ...] = (
    ("technical", r"migrat\w*|deploy\w*|releas\w*|bug\w*|code|server\w*|database\w*|api|"
                  r"build\w*|tests?|refactor\w*|postgres\w*|mysql|outage|latency|ship\w*|"
                  r"version|upgrade\w*|compil\w*|docker|kubernetes"),
    ("business", r"sales|revenue|customers?|clients?|market\w*|price\w*|pricing|deal\w*|"
                 r"contracts?|budget\w*|profit\w*|funding|investors?|quarter\w*|q[1-4]"),
    ("project", r"projects?|deadlines?|milestones?|launch\w*|sprints?|roadmap\w*|deliver\w*|"
                r"timeline\w*|phase\w*|scope"),
    ("emotional", r"feel\w*|mood\w*|happy|sad|stress\w*|upset|anxious|angry|calm\w*|"
                  r"excited|lonely|worr\w*"),
    ("work_patterns", r"productiv\w*|focus\w*|procrastinat\w*|overtime|work\w*\s+late|"
                      r"morning\s+routine|habit\w*|energy"),
    ("behavioral", r"(?:he|she|they)\s+(?:will|'ll|won't)|gets?\s+the\s+job|hire\w*|"
                   r"promot\w*|quit\w*|agree\w*|respond\w*|reply|replies|show\s+up"),
)
_DOMAIN_RX = tuple((d, re.compile(rf"\b(?:{w})\b", _I)) for d, w in DOMAIN_WORDS)


@dataclass(frozen=True)
class PredictionConfig:
    levels: Mapping[str, float]  # certain / likely / default / possible / unlikely
    horizon_days: float  # the deadline when the sentence names none

    @classmethod
    def from_table(cls, t: Mapping[str, object]) -> PredictionConfig:
        levels = {k: float(t[f"confidence_{k}"])  # type: ignore[arg-type]
                  for k in ("certain", "likely", "default", "possible", "unlikely")}
        return cls(levels, float(t["default_horizon_days"]))  # type: ignore[arg-type]


@dataclass(frozen=True)
class FoundPrediction:
    statement: str  # the sentence
    cue: str  # the frame or hedge that made it one
    confidence: float
    deadline: Deadline
    domain: str


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split("\r"))) if s.strip()]


def is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or bool(_QUESTION_START.match(sentence))


def _hedge(sentence: str) -> tuple[str, str] | None:
    """(level, word) of the strongest-matching hedge, the longest phrase first."""
    low = " ".join(sentence.lower().replace("\u2019", "'").split())
    best: tuple[int, str, str] | None = None
    for level, words in HEDGES.items():
        for w in words:
            if re.search(rf"(?<![\w']){re.escape(w)}(?![\w'])", low) and (
                    best is None or len(w) > best[0]):
                best = (len(w), level, w)
    return None if best is None else (best[1], best[2])


def prediction_cue(sentence: str) -> str | None:
    """The cue that makes one sentence a prediction, or None (the rules above)."""
    s = " ".join(sentence.replace("\u2019", "'").split())
    if not s or is_question(s) or _CONDITIONAL.search(s) or _PAST_FRAME.search(s):
        return None
    strong = _STRONG.search(s)
    if strong:
        return strong[0].lower()
    weak, future = _WEAK.search(s), _FUTURE.search(s)
    if weak and future:
        return weak[0].lower()
    if future and not _OWN_PLAN.match(s) and _hedge(s):
        return future[0].lower()
    return None


def domain_of(text: str) -> str:
    """The model domain a text is about (keyword heuristic); 'general' when none fits."""
    for domain, rx in _DOMAIN_RX:
        if rx.search(text):
            return domain
    return "general"


def confidence_of(sentence: str, levels: Mapping[str, float]) -> float:
    found = _hedge(sentence)
    return float(levels[found[0] if found else "default"])


def find_prediction(text: str, now: datetime, cfg: PredictionConfig
                    ) -> FoundPrediction | None:
    """The first prediction in a turn's text, with its confidence, deadline (against the
    turn's time `now`) and domain; None when no sentence is one."""
    for s in sentences(text):
        cue = prediction_cue(s)
        if cue is None:
            continue
        statement = s[:1000]
        return FoundPrediction(statement, cue, confidence_of(s, cfg.levels),
                               deadline_or_default(s, now, cfg.horizon_days), domain_of(s))
    return None


# -- settling ---------------------------------------------------------------------

_NUMBERS = "|".join(sorted((*NUMBER_WORDS, *FUZZY_COUNTS), key=len, reverse=True))
_QUANTITY = re.compile(rf"\b(?P<n>\d{{1,4}}(?:\.\d+)?|{_NUMBERS})\s+(?P<unit>minutes?|hours?|"
                       r"days?|weeks?|months?|years?|sessions?|sprints?|percent|%)", _I)
_PARTIAL = re.compile(r"\b(?:partly|partially|in\s+part|half\s+right|half\s+true|sort\s+of|"
                      r"kind\s+of|somewhat|mostly|more\s+or\s+less|to\s+some\s+extent)\b", _I)
# what the turn says of the prediction itself: right or wrong whatever it predicted
_SAID_RIGHT = re.compile(r"\b(?:as\s+(?:i|you|we)\s+(?:expected|predicted|thought|said|guessed)|"
                         r"as\s+expected|as\s+predicted|(?:i|you|we)\s+were\s+right|"
                         r"(?:i|you)\s+called\s+it|called\s+it|sure\s+enough|came\s+true|"
                         r"just\s+as|turned\s+out\s+right|spot\s+on)\b", _I)
_SAID_WRONG = re.compile(r"\b(?:(?:i|you|we)\s+were\s+wrong|was\s+wrong|not\s+as\s+expected|"
                         r"turned\s+out\s+(?:not|otherwise)|no\s+such\s+luck|nope)\b", _I)
# what happened, read against the prediction's polarity ("will fail" is right when it
# failed; "won't call" is right when they didn't)
_EVENT = re.compile(
    r"\b(?:(?P<good>(?:right\s+)?on\s+(?:time|schedule))|(?P<did>it\s+did|they\s+did|"
    r"(?:she|he)\s+did|did\s+happen)|(?P<didnt>didn'?t|did\s+not|never|wasn'?t|weren'?t)|"
    r"(?P<bad>took\s+(?:longer|more)|late|delayed|behind\s+schedule|missed|failed|"
    r"fell\s+through))\b", _I)
_NEGATED = re.compile(r"\b(?:won'?t|will\s+not|not\s+going\s+to|never|isn'?t\s+going\s+to|"
                      r"aren'?t\s+going\s+to)\b", _I)
_BAD = re.compile(r"\b(?:fail\w*|late|delay\w*|slip\w*|miss\w*|behind|fall\s+through|"
                  r"overrun\w*|take\s+longer)\b", _I)
# a report of how things went: a past-tense outcome, not another forecast
_REPORT = re.compile(r"\b(?:took|was|were|did|didn'?t|ended\s+up|in\s+the\s+end|turned\s+out|"
                     r"finished|shipped|landed|got|happened|came|went|finally|actually|"
                     r"\w+ed)\b", _I)


def _quantities(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for m in _QUANTITY.finditer(text):
        raw = m["n"].lower()
        n = float(raw) if raw[0].isdigit() else float(
            NUMBER_WORDS.get(raw) or FUZZY_COUNTS[raw][1])
        out.setdefault(m["unit"].lower().rstrip("s"), n)
    return out


def settlement_cue(prediction: str, turn: str) -> tuple[Status, str] | None:
    """How a later turn settles a prediction it is about (the caller checks that it is):
    (status, cue), or None when the turn reports no outcome."""
    s = " ".join(turn.replace("\u2019", "'").split())
    if not s or is_question(s) or any(prediction_cue(x) for x in sentences(s)):
        return None
    if not _REPORT.search(s):
        return None
    said, got = _quantities(prediction), _quantities(s)
    shared = [u for u in said if u in got]
    if shared:
        u = shared[0]
        if said[u] == got[u]:
            return "correct", f"quantity-check: {got[u]:g} {u}s as predicted"
        return "wrong", f"quantity-check: {got[u]:g} {u}s, not {said[u]:g}"
    for status, rx in (("partially_correct", _PARTIAL), ("correct", _SAID_RIGHT),
                       ("wrong", _SAID_WRONG)):
        m = rx.search(s)
        if m:
            return status, m[0].lower()  # type: ignore[return-value]
    m = _EVENT.search(s)  # the first thing the turn says happened (or did not)
    if m is None:
        return None
    neg, bad = bool(_NEGATED.search(prediction)), bool(_BAD.search(prediction))
    right = {"good": not neg and not bad, "did": not neg, "didnt": neg,
             "bad": bad != neg}[m.lastgroup or ""]
    return ("correct" if right else "wrong"), f"polarity-check: {m[0].lower()}"


LESSON = re.compile(r"\b(?:lesson(?:\s+learned)?|takeaway|next\s+time|i\s+learned|we\s+learned)"
                    r"\b[:,]?\s*(?P<lesson>[^.!?]{4,240})", _I)


def lesson_of(text: str) -> str | None:
    """The one-line lesson a turn states ("lesson: ...", "next time ..."), if any."""
    m = LESSON.search(text)
    return m["lesson"].strip() if m else None


def may_hold_prediction(text: str) -> bool:
    """Whether any sentence has a future marker or an expectation frame (the cheap filter
    before a model is asked)."""
    return any(_FUTURE.search(s) or _STRONG.search(s) or _WEAK.search(s)
               for s in sentences(text))


def may_report_outcome(text: str) -> bool:
    """Whether some sentence that is not a question reports what happened (the cheap
    filter before a model is asked to settle a prediction or a decision's outcome)."""
    return any(_REPORT.search(s) and not is_question(s) for s in sentences(text))
