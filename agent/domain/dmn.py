"""The idle default-mode network (issue #5; seed 003 §Idle Loop, seed 002 Overwatch, §17d).

Pure rules: the adaptive heartbeat, stochastic surfacing with evolving weights,
what a surfaced item becomes (self-prompt, creative impulse, discard), the
rumination cap, the proactive-recall triggers, and the gut signal.

The task-completion and winding-down triggers are keyword heuristics (named
`trigger_detector = "keyword-heuristic"` in the thoughts they produce). A gut signal's
outcome is read as good or bad by the `gut-outcome-heuristic` (`gut_outcome_valence`);
the outcome-tagged deltas give a "hope" direction that raises the surfacing intensity of
what lies along it and lowers what lies against it (seed 003 §17d, Hope and Fear).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.domain.tables import need

FEATURES = ("recency", "gut_intensity", "association", "access")


@dataclass(frozen=True)
class DmnConfig:
    idle_after_minutes: tuple[float, ...]
    interval_minutes: tuple[float, ...]
    seconds_per_minute: float  # tests run the DMN on a fast clock
    rumination_cap: int
    weights: Mapping[str, float]
    noise: float
    max_injected: int
    topic_cooldown_minutes: float
    match_max_distance: float
    topic_shift_min_distance: float
    search_results: int
    connection_min_similarity: float
    weight_step: float
    max_per_session: int  # seed 000 §6.3 observations' cooldown, per session
    min_minutes_between: float
    act_idle_minutes: float  # thoughts that act: idle for this long ...
    act_every_minutes: float  # ... and at most one internal turn this often
    act_recall_results: int
    unshown_max_age_minutes: float  # an idle thought or proactive recall not shown: 'expired'
    gut_outcome_gain: float  # how far the gut's outcome record moves an item's intensity
    gut_outcome_signals: int  # the newest outcome-tagged gut signals read
    dormant_draw_probability: float  # seed 003 §Idle Loop: CMA dormant memory recovery
    dormant_after_days: float
    dormant_max_access_count: int
    dormant_min_similarity: float
    dormant_candidates: int
    dormant_refresh_importance: float

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> DmnConfig:
        return cls(
            idle_after_minutes=tuple(float(x) for x in need(t, "heartbeat_idle_after_minutes")),
            interval_minutes=tuple(float(x) for x in need(t, "heartbeat_interval_minutes")),
            seconds_per_minute=float(need(t, "seconds_per_minute")),
            rumination_cap=int(need(t, "rumination_cap")),
            weights={f: float(need(t, f"surfacing_weight_{f}")) for f in FEATURES},
            noise=float(need(t, "surfacing_noise")),
            max_injected=int(need(t, "max_injected_thoughts")),
            topic_cooldown_minutes=float(need(t, "topic_cooldown_minutes")),
            match_max_distance=float(need(t, "match_max_distance")),
            topic_shift_min_distance=float(need(t, "topic_shift_min_distance")),
            search_results=int(need(t, "search_results")),
            connection_min_similarity=float(need(t, "connection_min_similarity")),
            weight_step=float(need(t, "surfacing_weight_step")),
            max_per_session=int(need(t, "max_observations_per_session")),
            min_minutes_between=float(need(t, "min_minutes_between_observations")),
            act_idle_minutes=float(need(t, "act_idle_minutes")),
            act_every_minutes=float(need(t, "act_every_minutes")),
            act_recall_results=int(need(t, "act_recall_results")),
            unshown_max_age_minutes=float(need(t, "unshown_max_age_minutes")),
            gut_outcome_gain=float(need(t, "gut_outcome_gain")),
            gut_outcome_signals=int(need(t, "gut_outcome_signals")),
            dormant_draw_probability=float(need(t, "dormant_draw_probability")),
            dormant_after_days=float(need(t, "dormant_after_days")),
            dormant_max_access_count=int(need(t, "dormant_max_access_count")),
            dormant_min_similarity=float(need(t, "dormant_min_similarity")),
            dormant_candidates=int(need(t, "dormant_candidates")),
            dormant_refresh_importance=float(need(t, "dormant_refresh_importance")),
        )


def heartbeat_seconds(idle_seconds: float, cfg: DmnConfig) -> float:
    """The DMN's interval for how long the agent has been idle (on the configured clock)."""
    idle_minutes = idle_seconds / cfg.seconds_per_minute
    interval = cfg.interval_minutes[0]
    for after, every in zip(cfg.idle_after_minutes, cfg.interval_minutes, strict=True):
        if idle_minutes >= after:
            interval = every
    return interval * cfg.seconds_per_minute


@dataclass(frozen=True)
class Surfaceable:
    id: str  # "memory:<uuid>", "identity:<name>", "goal:<name>"
    layer: int  # 0 identity, 1 goals, 2 memories
    content: str
    recency: float  # 0..1
    gut_intensity: float  # importance or weight, 0..1
    association: float  # similarity to the current attention, 0..1
    access: float  # normalised access frequency, 0..1
    owner: Any = None  # the memory's user (None: identity, goals, a memory of no user)
    dormant: bool = False  # drawn by dormant-memory recovery


def surface(
    items: Sequence[Surfaceable], weights: Mapping[str, float], noise: float, rng: random.Random
) -> tuple[Surfaceable, dict[str, float]] | None:
    """One item drawn by weighted features plus genuine noise; and what each feature gave."""
    best: tuple[float, Surfaceable, dict[str, float]] | None = None
    for item in items:
        parts = {f: weights.get(f, 0.0) * float(getattr(item, f)) for f in FEATURES}
        score = sum(parts.values()) + rng.gauss(0.0, noise)
        if best is None or score > best[0]:
            best = (score, item, parts)
    return None if best is None else (best[1], best[2])


def evolve_weights(weights: Mapping[str, float], contributions: Mapping[str, float],
                   useful: bool, step: float) -> dict[str, float]:
    """Nudge the feature that contributed most toward (useful) or away from an outcome."""
    if not contributions:
        return dict(weights)
    lead = max(contributions, key=lambda f: contributions[f])
    out = dict(weights)
    out[lead] = max(0.01, out.get(lead, 0.0) + (step if useful else -step))
    total = sum(out.values())
    return {f: round(w / total, 5) for f, w in out.items()}


def classify(goal_similarity: float, value_similarity: float, pressing: bool,
             min_similarity: float) -> str:
    """Goal connection → self-prompt; value connection and nothing pressing → creative
    impulse; otherwise discard."""
    if goal_similarity >= min_similarity:
        return "self_prompt"
    if value_similarity >= min_similarity and not pressing:
        return "creative_impulse"
    return "discarded"


def session_cooling(count: int, minutes_since_last: float | None, cfg: DmnConfig) -> bool:
    """Per-session cooldown (seed 000 §6.3): at most `max_per_session` proactive recalls in
    one session, at least `min_minutes_between` apart."""
    if count >= cfg.max_per_session:
        return True
    return minutes_since_last is not None and minutes_since_last < cfg.min_minutes_between


def ruminating(theme_count: int, cfg: DmnConfig) -> bool:
    """The same theme at most `rumination_cap` times."""
    return theme_count >= cfg.rumination_cap


_DONE = re.compile(r"\b(done|finished|that works|it works now|solved|fixed it|all set|"
                   r"completed|shipped|merged)\b", re.I)
_WINDING = re.compile(r"\b(bye|good ?night|see you|talk (to you )?later|that'?s all|"
                      r"signing off|gotta go|i'?m off|wrap(ping)? up)\b", re.I)


def triggers(previous: npt.NDArray[np.float32] | None, current: npt.NDArray[np.float32],
             text: str, cfg: DmnConfig) -> list[str]:
    """Proactive-recall triggers for one user message."""
    fired = []
    if previous is not None:
        distance = 1.0 - float(np.dot(previous, current))
        if distance > cfg.topic_shift_min_distance:
            fired.append("topic_shift")
    if _DONE.search(text):
        fired.append("task_completion")
    if _WINDING.search(text):
        fired.append("winding_down")
    return fired


def centroid(vectors: Sequence[npt.NDArray[np.float32]],
             weights: Sequence[float] | None = None) -> npt.NDArray[np.float32] | None:
    if not vectors:
        return None
    w = np.asarray(weights if weights is not None else [1.0] * len(vectors), dtype=np.float32)
    if float(w.sum()) <= 0:
        return None
    c = (np.asarray(vectors, dtype=np.float32) * w[:, None]).sum(axis=0) / float(w.sum())
    return c.astype(np.float32)


def gut_delta(
    layers: Sequence[npt.NDArray[np.float32] | None], layer_weights: Sequence[float],
    attention: npt.NDArray[np.float32] | None, dim: int,
) -> npt.NDArray[np.float32]:
    """attention centroid minus subconscious centroid (0.5 L0 + 0.25 L1 + 0.25 L2).

    Zero while everything is blank (no layer has content, or no recent context).
    Missing layers drop out and the remaining weights are renormalised.
    """
    present = [(v, w) for v, w in zip(layers, layer_weights, strict=True) if v is not None]
    if not present or attention is None:
        return np.zeros(dim, dtype=np.float32)
    total = sum(w for _, w in present)
    sub = sum((v * (w / total) for v, w in present), np.zeros(dim, dtype=np.float32))
    return (attention - sub).astype(np.float32)


def recency_score(age_days: float, half_life_days: float = 7.0) -> float:
    return math.pow(0.5, max(0.0, age_days) / half_life_days)


GUT_OUTCOME_DETECTOR = "gut-outcome-heuristic"


def gut_outcome_valence(outcome: Mapping[str, Any] | None) -> float | None:
    """The gut-outcome heuristic: how a gut signal turned out, in [-1, 1], from its
    outcome (`dmn_gut_outcomes`). Half for "the conversation went on where the gut
    pointed" (delta_alignment > 0, else against), half for "memory helped there"
    (a recall matched or a reply cited a memory, else not): +1 both, -1 neither, 0 mixed.
    None: no user turn followed, so nothing is known."""
    if not outcome or not outcome.get("turns") or outcome.get("delta_alignment") is None:
        return None
    followed = 0.5 if float(outcome["delta_alignment"]) > 0 else -0.5
    useful = 0.5 if (int(outcome.get("recalls_matched") or 0)
                     + int(outcome.get("citations") or 0)) > 0 else -0.5
    return followed + useful


def hope_direction(deltas: Sequence[npt.NDArray[np.float32]],
                   valences: Sequence[float]) -> tuple[npt.NDArray[np.float32] | None, float]:
    """Seed 003 §17d (delta, action, OUTCOME) and Hope/Fear: the mean of the outcome-tagged
    deltas' directions, each signed by its outcome's valence. Its direction points where
    the gut was right (hope; away from where it was wrong, fear); its length in [0, 1] is
    how consistent that record is (the "recursive confidence" of the gut). (None, 0.0)
    without a record."""
    total = None
    n = 0
    for d, v in zip(deltas, valences, strict=True):
        norm = float(np.linalg.norm(d))
        if norm <= 0 or v == 0:
            continue
        unit = (np.asarray(d, dtype=np.float32) / norm) * float(v)
        total = unit if total is None else total + unit
        n += 1
    if total is None or n == 0:
        return None, 0.0
    mean = total / n
    length = float(np.linalg.norm(mean))
    if length <= 0:
        return None, 0.0
    return (mean / length).astype(np.float32), min(1.0, length)


def gut_intensity(base: float, alignment: float, confidence: float, gain: float) -> float:
    """An item's gut intensity for surfacing: its importance or weight, raised when it lies
    along the hope direction (cosine `alignment` > 0) and lowered against it, by at most
    `gain` x the record's confidence; within [0, 1]."""
    return max(0.0, min(1.0, base + gain * confidence * alignment))


def dormant_refresh(importance: float, refresh_to: float) -> float:
    """A recovered dormant memory's new importance: what decay took back up to
    `refresh_to` (never lowered)."""
    return max(importance, min(1.0, refresh_to))
