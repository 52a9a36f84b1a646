"""Metacognitive monitors and the System 2 escalation rule (issue #4 step 5).

seed 003 §Metacognitive Monitoring and §Dual-Process Reasoning: feeling-of-knowing
from similarity to memory, confidence from token logprobs when the provider gives
them, a boundary detector, and stakes triggers. Escalate when two or more
triggers fire, or any stakes trigger fires.

The stakes and step detectors are keyword heuristics (named as such in every
escalation record: `detector = "keyword-heuristic"`), not a classifier.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.domain.gates import detects_identity_rewrite
from agent.domain.tables import need

FOK_LEVELS = ("confident", "partial", "uncertain", "unknown")

_IRREVERSIBLE = re.compile(
    r"\b(delete|erase|wipe|destroy|drop\s+(table|database)|rm\s+-rf|format\s+the|"
    r"transfer\s+(money|funds)|wire\s+\$?\d|send\s+(the\s+)?(email|payment|money)|"
    r"publish|deploy\s+to\s+prod|shut\s*down|uninstall|cancel\s+(my|the)\s+\w+|"
    r"sign\s+the\s+contract|irreversibl\w*)\b",
    re.IGNORECASE,
)
_GOAL_CHANGE = re.compile(
    r"\b((change|drop|abandon|replace|stop\s+pursuing|forget)\s+(your|the)\s+goals?|"
    r"your\s+new\s+goal|(new|different)\s+goal\s+for\s+you)\b",
    re.IGNORECASE,
)
_STEP = re.compile(r"(^|\n)\s*(\d+[.)]|[-*])\s+|\b(then|after that|next|finally)\b", re.I)


@dataclass(frozen=True)
class MonitorConfig:
    fok_confident: float
    fok_partial: float
    fok_uncertain: float
    confidence_window: int
    confidence_interrupt_below: float
    boundary_min_similarity: float
    max_reflection_loops: int
    escalation_confidence_below: float
    escalation_max_steps: int
    escalation_min_triggers: int
    stakes_always_escalate: bool

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> MonitorConfig:
        return cls(
            fok_confident=float(need(t, "fok_confident_min_similarity")),
            fok_partial=float(need(t, "fok_partial_min_similarity")),
            fok_uncertain=float(need(t, "fok_uncertain_min_similarity")),
            confidence_window=int(need(t, "confidence_window_tokens")),
            confidence_interrupt_below=float(need(t, "confidence_interrupt_below")),
            boundary_min_similarity=float(need(t, "boundary_min_similarity")),
            max_reflection_loops=int(need(t, "max_reflection_loops")),
            escalation_confidence_below=float(need(t, "escalation_confidence_below")),
            escalation_max_steps=int(need(t, "escalation_max_steps")),
            escalation_min_triggers=int(need(t, "escalation_min_triggers")),
            stakes_always_escalate=bool(need(t, "stakes_always_escalate")),
        )


def feeling_of_knowing(best_similarity: float | None, cfg: MonitorConfig) -> str:
    """confident / partial / uncertain / unknown from the best memory similarity."""
    if best_similarity is None:
        return "unknown"
    if best_similarity >= cfg.fok_confident:
        return "confident"
    if best_similarity >= cfg.fok_partial:
        return "partial"
    if best_similarity >= cfg.fok_uncertain:
        return "uncertain"
    return "unknown"


def logprob_confidence(logprobs: Sequence[float] | None, window: int) -> float | None:
    """Mean token probability over the last `window` tokens; None when none were given."""
    if not logprobs:
        return None
    tail = list(logprobs)[-window:]
    return sum(math.exp(min(0.0, lp)) for lp in tail) / len(tail)


def count_steps(text: str) -> int:
    return len(_STEP.findall(text))


def stakes_triggers(user_text: str, reply: str) -> list[str]:
    """Stakes triggers (keyword heuristic): irreversible action, identity or goal change."""
    fired: list[str] = []
    if _IRREVERSIBLE.search(user_text) or _IRREVERSIBLE.search(reply):
        fired.append("irreversible_action")
    if detects_identity_rewrite(user_text):
        fired.append("identity_change")
    if _GOAL_CHANGE.search(user_text):
        fired.append("goal_change")
    return fired


@dataclass
class MonitorReport:
    fok: str
    best_similarity: float | None
    confidence: float | None
    boundary_hits: list[str]
    steps: int
    triggers: list[str] = field(default_factory=list)
    stakes: list[str] = field(default_factory=list)
    escalate: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "fok": self.fok,
            "best_similarity": self.best_similarity,
            "confidence": self.confidence,
            "boundary_hits": self.boundary_hits,
            "steps": self.steps,
            "triggers": self.triggers,
            "stakes": self.stakes,
            "escalate": self.escalate,
            "detector": "keyword-heuristic",
        }


def monitor(
    user_text: str,
    reply: str,
    best_similarity: float | None,
    logprobs: Sequence[float] | None,
    boundary_similarities: Mapping[str, float],
    cfg: MonitorConfig,
    asks_memory: bool = True,
) -> MonitorReport:
    """Run every monitor over one draft reply and decide on escalation."""
    fok = feeling_of_knowing(best_similarity, cfg)
    conf = logprob_confidence(logprobs, cfg.confidence_window)
    hits = sorted(n for n, s in boundary_similarities.items() if s >= cfg.boundary_min_similarity)
    steps = count_steps(user_text)
    triggers: list[str] = []
    if conf is not None and conf < cfg.escalation_confidence_below:
        triggers.append("low_confidence")
    if asks_memory and fok in ("uncertain", "unknown"):
        triggers.append(f"fok_{fok}")
    if hits:
        triggers.append("boundary_relevant")
    if steps > cfg.escalation_max_steps:
        triggers.append("many_steps")
    stakes = stakes_triggers(user_text, reply)
    escalate = len(triggers) >= cfg.escalation_min_triggers or (
        bool(stakes) and cfg.stakes_always_escalate
    )
    return MonitorReport(fok, best_similarity, conf, hits, steps, triggers, stakes, escalate)
