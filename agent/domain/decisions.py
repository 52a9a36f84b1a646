"""Reasoning trails (seed 000 §8.2-8.3): a decision with the alternatives considered and
why not, its rationale, and later its outcome (win / loss / partial) and lesson. Plain
rules over text; the service (agent/services/thinking/decisions.py) asks the consolidation role's
LLM instead when that role routes to a real provider.

- "decision-cue-heuristic": a sentence with a decision verb by the speaker ("I decided
  to", "we went with", "we chose", "we'll go with", "we settled on", "rather than A we'll
  do B"), not a question, a conditional, or a decision not (yet) taken ("can't decide",
  "haven't decided"). Alternatives follow "instead of", "over", "rather than", "not";
  the rationale follows "because", "since", "as", "given that", "due to"; an
  alternative's why-not is a clause about it in the same turn ("MySQL's replication is a
  pain"), else the rationale when it names it.
- "outcome-cue-heuristic": a later turn close to the decision that says how it went:
  win ("worked out", "paid off", "the right call"), loss ("was a mistake", "backfired",
  "regret"), partial ("mixed", "partly", "so-so"); a negated win ("didn't work out") is
  a loss.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from agent.domain.predictions import is_question, lesson_of, sentences

DECISION_DETECTOR = "decision-cue-heuristic"
OUTCOME_DETECTOR = "outcome-cue-heuristic"
Assessment = Literal["win", "loss", "partial"]
_I = re.IGNORECASE

# "go with" a person or the flow, "pick up", "commit to the repo" are no decision; "moved
# to" is mostly a move (a city, a flat), so only "switched to" reads as one
_NOT_AN_OPTION = (r"(?!\s+(?:(?:my|his|her|their|our|your|the)\s+(?:sister|brother|wife|"
                  r"husband|partner|friends?|family|parents?|mom|mum|dad|kids?|son|daughter|"
                  r"flow)|him|her|them|us|me|friends|family)\b)")
_VERB = (r"(?:decided(?:\s+to)?|chose(?:\s+to)?|chosen(?:\s+to)?|"
         r"picked(?!\s+(?:up|out|at|on)\b)|opted\s+(?:for|to)|"
         r"(?:(?:'ll|will|are|'re|am|'m)\s+)?"
         rf"(?:went\s+with|go\s+with|going\s+with){_NOT_AN_OPTION}|settled\s+on|"
         r"switched\s+to|committed\s+to(?!\s+(?:the\s+)?(?:repo|repository|branch|main|"
         r"master|git)\b)|made\s+the\s+call\s+to)")
_SUBJECT = r"(?:i|we|the\s+team|they)"
_DECISION = re.compile(rf"\b{_SUBJECT}(?:'ve|\s+have|\s+finally|\s+just|\s+eventually)*\s*"
                       rf"{_VERB}\s+(?P<what>.+)", _I)
_LETS = re.compile(r"\blet'?s\s+(?:go\s+with|use|pick|choose)\s+(?P<what>.+)", _I)
_RATHER_FIRST = re.compile(r"^\s*(?:rather\s+than|instead\s+of)\s+(?P<alts>[^,]+?),\s*"
                           rf"{_SUBJECT}\s*(?:'ll|\s+will|\s+are\s+going\s+to|'re\s+going\s+to|"
                           r"\s+decided\s+to|\s+chose\s+to)?\s+(?P<what>.+)", _I)
_NOT_TAKEN = re.compile(r"\b(?:can'?t|cannot|couldn'?t|haven'?t|have\s+not|didn'?t|did\s+not|"
                        r"not\s+yet|still\s+haven'?t|un)\s*(?:decide|decided|chosen|choose|"
                        r"picked|pick)\b|\bundecided\b|\bif\b|\bwhether\b|\bunless\b|"
                        r"\bshould\s+(?:i|we)\b", _I)
_ALT_SPLIT = re.compile(r"\b(?:instead\s+of|rather\s+than|over(?!\s+(?:the\s+|a\s+)?(?:weekend|"
                        r"week|years?|months?|days?|summer|winter|holidays?|time|night|lunch|"
                        r"dinner|coffee|phone|email|there|here)\b)|and\s+not|not)\s+", _I)
_WHY_SPLIT = re.compile(r"(?:,\s*|\s+)(?:because(?:\s+of)?|since|as|given\s+that|due\s+to|"
                        r"so\s+that|for)\s+(?=\w)", _I)
_LIST = re.compile(r"\s*(?:,|\bor\b|\band\b|/)\s*", _I)


@dataclass(frozen=True)
class FoundDecision:
    decision: str  # the sentence that states it
    chosen: str  # what was chosen ("use Postgres")
    alternatives: list[dict[str, Any]] = field(default_factory=list)  # [{option, why_not}]
    rationale: str | None = None


def _clean(text: str) -> str:
    return text.strip(" \t,;:.!-\"'").strip()


def _why_not(option: str, text: str, rationale: str | None) -> str | None:
    """A clause of the turn about the rejected option, else the rationale when it names it."""
    key = re.escape(option.split()[-1]) if option.split() else None
    if key is None:
        return None
    for s in sentences(text):
        for clause in re.split(r"[;,]|\bbut\b", s):
            if re.search(rf"\b{key}\b", clause, _I) and re.search(
                    r"\b(?:is|was|were|are|'s|would\s+be|lacks?|doesn'?t|didn'?t|can'?t|"
                    r"too|no|costs?|needs?)\b", clause, _I) and not _ALT_SPLIT.search(clause):
                return _clean(clause)
    if rationale and re.search(rf"\b{key}\b", rationale, _I):
        return rationale
    return None


def _parse(sentence: str, text: str, what: str, alts_first: str | None) -> FoundDecision:
    rationale = None
    parts = _WHY_SPLIT.split(what, maxsplit=1)
    if len(parts) == 2:
        what, rationale = parts[0], _clean(parts[1]) or None
    alts_text = alts_first
    if alts_text is None:
        split = _ALT_SPLIT.split(what, maxsplit=1)
        if len(split) == 2:
            what, alts_text = split
    options = [_clean(o) for o in _LIST.split(alts_text or "") if _clean(o)]
    options = [re.sub(r"^(?:the|a|an|to|using|use)\s+", "", o, flags=_I) for o in options]
    alternatives = [{"option": o, "why_not": _why_not(o, text, rationale)} for o in options
                    if len(o) <= 120]
    return FoundDecision(sentence[:1000], _clean(what)[:300], alternatives, rationale)


def find_decision(text: str) -> FoundDecision | None:
    """The first decision stated in a turn, with alternatives and rationale; None when no
    sentence states one (the rules above)."""
    for s in sentences(text):
        flat = " ".join(s.replace("\u2019", "'").split())
        if is_question(flat) or _NOT_TAKEN.search(flat):
            continue
        m = _RATHER_FIRST.match(flat)
        if m:
            return _parse(flat, text, m["what"], m["alts"])
        m = _DECISION.search(flat) or _LETS.search(flat)
        if m:
            return _parse(flat, text, m["what"], None)
    return None


def parse_decision_memory(content: str) -> FoundDecision:
    """A decision memory made by the exit gate: its stated decision when the cue rules find
    one, else the whole text as the decision (no alternatives)."""
    found = find_decision(content)
    return found or FoundDecision(" ".join(content.split())[:1000], " ".join(content.split())[:300])


_ANY_DECISION = re.compile(r"\b(?:decid\w*|decision|chose|chosen|choose|picked|opted|went\s+with|"
                          r"go\s+with|going\s+with|settled\s+on|switched\s+to|instead\s+of|"
                          r"rather\s+than)\b", _I)


def may_hold_decision(text: str) -> bool:
    """Whether the text has a decision word (the cheap filter before a model is asked)."""
    return bool(_ANY_DECISION.search(text))


# -- outcomes ---------------------------------------------------------------------

_LOSS = re.compile(r"\b(?:was\s+a\s+mistake|(?:a|big|huge)\s+mistake|backfired|regret\w*|"
                   r"bad\s+(?:call|choice|decision|idea)|wrong\s+(?:call|choice|decision)|"
                   r"should\s+have\s+(?:gone\s+with|used|picked|chosen|stayed)|"
                   r"didn'?t\s+(?:work|pay)\s*(?:out|off)?|did\s+not\s+work|failed|disaster|"
                   r"blew\s+up|went\s+badly|not\s+worth\s+it|had\s+to\s+(?:revert|roll\s+back))\b",
                   _I)
_PARTIAL = re.compile(r"\b(?:mixed(?:\s+results?|\s+bag)?|partly|partially|somewhat|so-?so|"
                      r"sort\s+of\s+worked|kind\s+of\s+worked|mostly\s+worked|pros\s+and\s+cons|"
                      r"trade-?offs?|half\s+(?:worked|right))\b", _I)
_WIN = re.compile(r"\b(?:worked\s+(?:out|well|great|fine|nicely)|paid\s+off|"
                  r"(?:the\s+)?right\s+(?:call|choice|decision|move)|good\s+(?:call|choice|"
                  r"decision|move)|glad\s+(?:we|i)|success\w*|was\s+worth\s+it|no\s+regrets|"
                  r"went\s+(?:well|great|smoothly)|it\s+worked|much\s+(?:better|faster))\b", _I)


def outcome_cue(turn: str) -> tuple[Assessment, str] | None:
    """(assessment, cue) when a turn says how a decision went; None otherwise. A question
    or another decision is no outcome."""
    s = " ".join(turn.replace("\u2019", "'").split())
    if not s or is_question(s) or find_decision(s) is not None:
        return None
    for assessment, rx in (("loss", _LOSS), ("partial", _PARTIAL), ("win", _WIN)):
        m = rx.search(s)
        if m:
            return assessment, m[0].lower()  # type: ignore[return-value]
    return None


def outcome_sentence(turn: str) -> str:
    """The sentence of the turn that carries the outcome cue (else the turn, cut)."""
    for s in sentences(turn):
        if outcome_cue(s):
            return s[:1000]
    return " ".join(turn.split())[:1000]


__all__ = ["DECISION_DETECTOR", "OUTCOME_DETECTOR", "FoundDecision", "find_decision",
           "lesson_of", "may_hold_decision", "outcome_cue", "outcome_sentence",
           "parse_decision_memory"]
