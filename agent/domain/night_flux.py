"""Flux detection (seed 001 §3.2; night-cycle stage 1): per-turn surprise → flux arcs.

The surprise signal is the provider's perplexity when every turn of a stretch has one;
otherwise a named proxy, `embedding_novelty_proxy`: 1 - cosine of the turn's universal
embedding to the centroid of the turns just before it (a turn that leaves the running
context is "surprising"). A rolling baseline (mean and std of the last 20 turns) opens
a flux arc when a turn spikes 1.5 std above it; the arc closes after 2 consecutive
stable turns (smoothed derivative below the threshold).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.domain.tables import scalar_fields

SIGNAL_PERPLEXITY = "perplexity"
SIGNAL_NOVELTY = "embedding_novelty_proxy"
FLUX_STATES = ("baseline", "spike", "resolution", "stable")


@dataclass(frozen=True)
class FluxConfig:
    smoothing_turns: int
    baseline_window_turns: int
    spike_sigma: float
    stable_derivative: float
    stable_turns: int
    baseline_min_turns: int
    min_sigma: float
    novelty_context_turns: int
    stable_derivative_in_sigma: bool

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> FluxConfig:
        return cls(**scalar_fields(cls, t, {"flux_smoothing_turns": "smoothing_turns"}))


@dataclass(frozen=True)
class FluxArc:
    """One arc, by turn index within its stretch; `end` is the closing turn (or the last)."""

    start: int
    end: int
    peak: float
    baseline: float
    sigma: float
    final: float
    closed: bool

    @property
    def duration(self) -> int:
        return self.end - self.start + 1

    @property
    def reversal_quality(self) -> float:
        """seed 001 §3.2: (peak - final) x arc duration."""
        return (self.peak - self.final) * self.duration

    @property
    def arrete(self) -> float:
        """seed 001 §3.3: (baseline - final) / baseline."""
        return arrete(self.baseline, self.final)

    def as_dict(self) -> dict[str, Any]:
        return {
            "start": self.start, "end": self.end, "peak": round(self.peak, 6),
            "baseline": round(self.baseline, 6), "sigma": round(self.sigma, 6),
            "final": round(self.final, 6), "closed": self.closed,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FluxArc:
        return cls(int(d["start"]), int(d["end"]), float(d["peak"]), float(d["baseline"]),
                   float(d["sigma"]), float(d["final"]), bool(d["closed"]))


@dataclass
class FluxTrace:
    signal: list[float | None]
    z: list[float] = field(default_factory=list)
    smoothed: list[float | None] = field(default_factory=list)
    baseline: list[float | None] = field(default_factory=list)
    states: list[str] = field(default_factory=list)
    arcs: list[FluxArc] = field(default_factory=list)


def arrete(baseline: float, final: float) -> float:
    return 0.0 if baseline <= 0 else (baseline - final) / baseline


def _unit(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    n = float(np.linalg.norm(v))
    return v if n == 0 else (v / n).astype(np.float32)


def novelty_signal(
    vectors: Sequence[npt.NDArray[np.float32] | None], context_turns: int
) -> list[float | None]:
    """The proxy: 1 - cos(turn, centroid of the previous `context_turns` embedded turns).

    None where there is no context yet (the first turn) or the turn has no embedding.
    """
    out: list[float | None] = []
    recent: list[npt.NDArray[np.float32]] = []
    for v in vectors:
        if v is None:
            out.append(None)
            continue
        if recent:
            centroid = _unit(np.mean(np.stack(recent[-context_turns:]), axis=0))
            out.append(float(1.0 - float(np.dot(_unit(v), centroid))))
        else:
            out.append(None)
        recent.append(v)
    return out


def choose_signal(
    perplexities: Sequence[float | None],
    vectors: Sequence[npt.NDArray[np.float32] | None],
    context_turns: int,
) -> tuple[str, list[float | None]]:
    """Perplexity when the provider gave it for every turn; else the novelty proxy."""
    if perplexities and all(p is not None for p in perplexities):
        return SIGNAL_PERPLEXITY, [float(p) for p in perplexities if p is not None]
    return SIGNAL_NOVELTY, novelty_signal(vectors, context_turns)


def detect_flux(signal: Sequence[float | None], cfg: FluxConfig) -> FluxTrace:
    """States per turn and the flux arcs of one stretch (seed 001 §3.2's detection logic)."""
    trace = FluxTrace(signal=list(signal))
    history: list[float] = []
    recent: list[float] = []
    open_arc: dict[str, Any] | None = None
    prev_smooth: float | None = None
    last_value: float | None = None
    for t, s in enumerate(signal):
        window = history[-cfg.baseline_window_turns:]
        mu: float | None = None
        sd = cfg.min_sigma
        if len(window) >= cfg.baseline_min_turns:
            mu = float(np.mean(window))
            sd = max(float(np.std(window)), cfg.min_sigma)
        trace.baseline.append(mu)
        if s is None:
            trace.z.append(0.0)
            trace.smoothed.append(prev_smooth)
            trace.states.append("resolution" if open_arc else "baseline")
            continue
        z = 0.0 if mu is None else (s - mu) / sd
        trace.z.append(z)
        recent.append(s)
        smooth = float(np.mean(recent[-cfg.smoothing_turns:]))
        trace.smoothed.append(smooth)
        spike = mu is not None and s > mu + cfg.spike_sigma * sd
        if open_arc is None:
            if spike:
                assert mu is not None
                open_arc = {"start": t, "peak": s, "baseline": mu, "sigma": sd, "stable": 0}
                trace.states.append("spike")
            else:
                trace.states.append("baseline")
        elif spike:
            open_arc["peak"] = max(open_arc["peak"], s)
            open_arc["stable"] = 0
            trace.states.append("spike")
        else:
            deriv = smooth - (prev_smooth if prev_smooth is not None else smooth)
            if cfg.stable_derivative_in_sigma:
                deriv /= open_arc["sigma"]
            open_arc["stable"] = open_arc["stable"] + 1 if deriv < cfg.stable_derivative else 0
            if open_arc["stable"] >= cfg.stable_turns:
                trace.arcs.append(FluxArc(open_arc["start"], t, open_arc["peak"],
                                          open_arc["baseline"], open_arc["sigma"], s, True))
                open_arc = None
                trace.states.append("stable")
            else:
                trace.states.append("resolution")
        history.append(s)
        prev_smooth = smooth
        last_value = s
    if open_arc is not None:
        final = last_value if last_value is not None else open_arc["peak"]
        trace.arcs.append(FluxArc(open_arc["start"], len(signal) - 1, open_arc["peak"],
                                  open_arc["baseline"], open_arc["sigma"], final, False))
    return trace


def phi(z: float) -> float:
    """Standard normal CDF: a z-score as a 0-1 novelty score (0.5 at the baseline)."""
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))
