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
    fok_confident: float = 0.65
    fok_partial: float = 0.45
    fok_uncertain: float = 0.3
    confidence_window: int = 20
    confidence_interrupt_below: float = 0.3
    boundary_min_similarity: float = 0.35
    max_reflection_loops: int = 3
    escalation_confidence_below: float = 0.4
    escalation_max_steps: int = 3
    escalation_min_triggers: int = 2
    stakes_always_escalate: bool = True

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> MonitorConfig:
        return cls(
            fok_confident=float(t.get("fok_confident_min_similarity", 0.65)),
            fok_partial=float(t.get("fok_partial_min_similarity", 0.45)),
            fok_uncertain=float(t.get("fok_uncertain_min_similarity", 0.3)),
            confidence_window=int(t.get("confidence_window_tokens", 20)),
            confidence_interrupt_below=float(t.get("confidence_interrupt_below", 0.3)),
            boundary_min_similarity=float(t.get("boundary_min_similarity", 0.35)),
            max_reflection_loops=int(t.get("max_reflection_loops", 3)),
            escalation_confidence_below=float(t.get("escalation_confidence_below", 0.4)),
            escalation_max_steps=int(t.get("escalation_max_steps", 3)),
            escalation_min_triggers=int(t.get("escalation_min_triggers", 2)),
            stakes_always_escalate=bool(t.get("stakes_always_escalate", True)),
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
