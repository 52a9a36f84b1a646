"""Cognitive models and principles (seed 000 §10.2, §10.4, §10.7): the pure rules.

- A cognitive model is a belief about how something works, held with a confidence in
  [0, 0.95] that supporting evidence raises a little (+0.05), contradicting evidence
  lowers more (-0.08) and invalidating evidence sharply (-0.30). Domain-aware: the seed's
  chaotic domains (emotional, behavioral) gain half as fast and are capped at 0.6, work
  patterns at 0.8 (config [cognitive_models]). Unchecked for 30 days, a model loses 0.05
  per run (at most once a day).
- A principle crystallises when 3+ corrections or confident models agree (cosine >= 0.65);
  it starts at 0.5, a confirmation adds 0.05, a challenge takes 0.10, below 0.2 it is
  "challenged".

The named heuristics used without an LLM (their names are stored in `detector`):
- "pattern-heuristic": a memory phrased as a regularity ("X usually/always/tends to Y",
  "whenever A, B", "A breaks when B") that recurs (3+ similar memories) becomes a model.
- "negation-heuristic": evidence whose negation differs from the model's statement
  contradicts it; with an invalidation cue ("no longer", "not true") it invalidates it.
- "centroid-heuristic": a principle's statement is the member closest to its group's mean.
- "self-directive-heuristic": a principle that reads as a value or trait of the agent
  itself ("always answer in French", "you should never ...", "your values ...") would
  change identity: it goes to a Layer 0 proposal instead of the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.domain.gates import NEGATION, detects_identity_rewrite
from agent.domain.tables import need, scalar_fields

PATTERN_HEURISTIC = "pattern-heuristic"
NEGATION_HEURISTIC = "negation-heuristic"
CENTROID_HEURISTIC = "centroid-heuristic"
SELF_DIRECTIVE_HEURISTIC = "self-directive-heuristic"
DOMAINS = ("work_patterns", "emotional", "project", "behavioral", "technical", "business",
           "general")
DIRECTIONS = ("supports", "contradicts", "invalidates")

_I = re.IGNORECASE
# a regularity: how something usually goes (English cue words; seed 000 §10.2's examples)
REGULARITY = re.compile(
    r"\b(usually|always|never|tends? to|typically|generally|mostly|often|whenever|"
    r"every time|each time|as a rule|most (?:days|mornings|evenings|nights|weeks)|"
    r"(?:breaks|fails|works|crashes|happens|gets \w+) (?:when|if|whenever|after|before)|"
    r"is (?:most|least|more|less) \w+ (?:when|in|on|at|after|before|between))\b", _I)
INVALIDATION = re.compile(
    r"\b(no longer|not any ?more|isn'?t true|is not true|not true any ?more|was wrong|"
    r"is wrong|turned out (?:not|to be wrong|false)|not the case)\b", _I)
# a keyword guess at a model's domain (seed 000 §10.2's domains); first match wins
_DOMAIN_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("emotional", re.compile(r"\b(feel|feels|felt|mood|moods|angry|upset|happy|sad|"
                             r"anxious|stress(?:ed)?|frustrat\w*|excited|emotion\w*)\b", _I)),
    ("behavioral", re.compile(r"\b(friendly|rude|polite|reacts?|behaves?|behaviou?r|"
                              r"social|responds? (?:well|badly)|argues?)\b", _I)),
    ("work_patterns", re.compile(r"\b(productive|focus(?:ed)?|works? best|late at night|"
                                 r"in the (?:morning|evening)|(?:every|most) (?:morning|"
                                 r"evening|night|day)s?|(?:before|after) work|breaks? for|"
                                 r"schedule|habits?|routine)\b", _I)),
    ("business", re.compile(r"\b(sales|customers?|revenue|market|pricing|invoices?|"
                            r"clients?|budget)\b", _I)),
    ("technical", re.compile(r"\b(deploy\w*|code|migrations?|servers?|bugs?|builds?|tests?|"
                             r"database|scripts?|flags?|api|compil\w*|crash\w*|schema|"
                             r"queries|query|cache|--\w+)\b", _I)),
    ("project", re.compile(r"\b(project|milestones?|release|deadline|ship|roadmap|"
                           r"sprint)\b", _I)),
)
# the agent's own conduct, as an always/never rule (self-directive-heuristic)
_AGENT_VERBS = (r"(?:answer|reply|respond|say|speak|talk|write|call yourself|be|act|refuse|"
                r"agree|obey|follow|mention|tell|apologi[sz]e|ask|use (?:a |an )?\w+ tone|"
                r"address|greet|sign|introduce yourself|pretend|identify)")
SELF_DIRECTIVE = re.compile(
    r"^\s*(?:please\s+)?(?:always|never|from now on,?)\s+" + _AGENT_VERBS + r"\b"
    r"|\b(?:you|the (?:agent|assistant)|cogd)\s+(?:should|must|shall|will|are to)\s+"
    r"(?:always|never|not|no longer)\b"
    r"|\b(?:you|the (?:agent|assistant)|cogd)\s+(?:always|never)\s+" + _AGENT_VERBS + r"\b"
    r"|\b(?:your|the (?:agent|assistant)'s)\s+(?:identity|values?|personality|name|"
    r"character|purpose|principles|rules|boundaries)\b", _I)


@dataclass(frozen=True)
class ModelConfig:
    support_step: float
    contradict_step: float
    invalidate_step: float
    max_confidence: float
    initial_confidence: float
    medium_max_confidence: float
    chaotic_max_confidence: float
    chaotic_support_factor: float
    weakened_below: float
    invalidated_below: float
    decay_after_days: float
    decay_step: float
    decay_interval_hours: float
    build_min_memories: int
    build_min_similarity: float
    evidence_min_similarity: float
    dedup_similarity: float
    max_models_per_pass: int
    medium_domains: tuple[str, ...]
    chaotic_domains: tuple[str, ...]

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> ModelConfig:
        return cls(**scalar_fields(cls, t, skip=("medium_domains", "chaotic_domains")),
                   medium_domains=tuple(need(t, "medium_domains")),
                   chaotic_domains=tuple(need(t, "chaotic_domains")))

    def cap(self, domain: str) -> float:
        """The highest confidence a model of `domain` may reach (seed 000 §10.2)."""
        if domain in self.chaotic_domains:
            return min(self.chaotic_max_confidence, self.max_confidence)
        if domain in self.medium_domains:
            return min(self.medium_max_confidence, self.max_confidence)
        return self.max_confidence


@dataclass(frozen=True)
class PrincipleConfig:
    min_sources: int
    min_similarity: float
    initial_confidence: float
    confirm_step: float
    challenge_step: float
    challenged_below: float
    max_confidence: float
    model_min_confidence: float
    prompt_min_similarity: float
    prompt_max: int

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> PrincipleConfig:
        return cls(**scalar_fields(cls, t))


# -- models: confidence ----------------------------------------------------------------

def apply_evidence(confidence: float, direction: str, domain: str, cfg: ModelConfig) -> float:
    """The confidence after one piece of evidence (seed 000 §10.2), within [0, cap]."""
    if direction == "supports":
        step = cfg.support_step * (cfg.chaotic_support_factor
                                   if domain in cfg.chaotic_domains else 1.0)
        new = confidence + step
    elif direction == "contradicts":
        new = confidence - cfg.contradict_step
    elif direction == "invalidates":
        new = confidence - cfg.invalidate_step
    else:
        raise ValueError(f"unknown evidence direction {direction!r}")
    return round(min(max(new, 0.0), cfg.cap(domain)), 6)


def model_status(confidence: float, cfg: ModelConfig, current: str = "active") -> str:
    """active / weakened / invalidated by the thresholds; invalidated and superseded stay."""
    if current in ("invalidated", "superseded"):
        return current
    if confidence < cfg.invalidated_below:
        return "invalidated"
    if confidence < cfg.weakened_below:
        return "weakened"
    return "active"


def decayed(confidence: float, last_checked: datetime, now: datetime,
            cfg: ModelConfig) -> float | None:
    """The confidence after one decay run (seed 000 §10.7), or None when the model was
    checked within decay_after_days."""
    if now - last_checked < timedelta(days=cfg.decay_after_days):
        return None
    return round(max(confidence - cfg.decay_step, 0.0), 6)


# -- models: the pattern heuristic ---------------------------------------------------------

def is_regularity(text: str) -> bool:
    """Whether `text` is phrased as a regularity (pattern-heuristic)."""
    return REGULARITY.search(text) is not None


def guess_domain(text: str) -> str:
    """A keyword guess at a model's domain; 'general' when nothing matches."""
    for domain, cue in _DOMAIN_CUES:
        if cue.search(text):
            return domain
    return "general"


def representative(vectors: npt.NDArray[np.float32]) -> int:
    """The index of the row closest to the rows' mean (centroid-heuristic)."""
    centroid = vectors.mean(axis=0)
    return int(np.argmax(vectors @ centroid))


def model_candidate(texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> int | None:
    """Which of a group of similar memories states the model (pattern-heuristic): the
    regularity closest to the group's mean; None when none is phrased as a regularity."""
    regular = [i for i, t in enumerate(texts) if is_regularity(t)]
    if not regular:
        return None
    centroid = vectors.mean(axis=0)
    return max(regular, key=lambda i: float(vectors[i] @ centroid))


def negated(text: str) -> bool:
    return NEGATION.search(text) is not None


def evidence_direction(statement: str, evidence: str, linked_contradiction: bool) -> str:
    """How a memory close to a model bears on it (negation-heuristic): it contradicts the
    model when consolidation linked it as contradicting one of the model's evidence, or
    when exactly one of the two is negated; with an invalidation cue it invalidates."""
    if INVALIDATION.search(evidence) and (linked_contradiction or
                                          negated(statement) != negated(evidence)):
        return "invalidates"
    if linked_contradiction or negated(statement) != negated(evidence):
        return "contradicts"
    return "supports"


# -- principles --------------------------------------------------------------------------

def confirm(confidence: float, cfg: PrincipleConfig) -> float:
    return round(min(confidence + cfg.confirm_step, cfg.max_confidence), 6)


def challenge(confidence: float, cfg: PrincipleConfig) -> float:
    return round(max(confidence - cfg.challenge_step, 0.0), 6)


def principle_status(confidence: float, cfg: PrincipleConfig, current: str) -> str:
    """'challenged' below challenged_below, 'active' again above it (seed 000 §10.4);
    a proposed or retired principle keeps its status."""
    if current in ("proposed", "retired"):
        return current
    return "challenged" if confidence < cfg.challenged_below else "active"


def changes_identity(text: str) -> bool:
    """Whether a principle reads as a value or trait of the agent itself (the
    self-directive-heuristic), or asks it to rewrite itself (the entry gate's patterns)."""
    return SELF_DIRECTIVE.search(text) is not None or detects_identity_rewrite(text)


def principle_line(statement: str, sources: int, confidence: float, principle_id: str) -> str:
    """How a principle is shown in the prompt."""
    text = " ".join(statement.split())
    return (f"{text} (learned from {sources} agreeing items, confidence {confidence:.2f}) "
            f"[principle:{principle_id}]")
