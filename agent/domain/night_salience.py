"""Salience (seed 001 §3.3-§3.6, §8.5; night-cycle stage 3): P, C, ID at three levels.

Levels (seed 001 §3.6): sentence = one utterance (a turn), exchange = a user turn and
its answer, theme = the whole block. Each level reports the P, C, ID of its best unit
(the utterance or exchange with the highest composite), so a brilliant sentence in a
dull block still shows at sentence level.

- P (novelty): the normal CDF of the turn's surprise z-score against its rolling
  baseline (0.5 = baseline), averaged over the unit.
- C (coherence, "the embedding doesn't fracture", §8.5.2 part A): cosine between
  consecutive turns of the unit (a single utterance: cosine to the block centroid).
- ID (interrogative distance, §8.5.3): as a score it is the similarity of the unit's
  implicit question to the nearest active preoccupation centroid (seed 001 §13 glossary:
  "similarity between query and Preoccupation Centroid"); `interrogative_distance` is
  1 - that. The implicit question is a named proxy: the unit's user turns' embedding
  (no LLM question distillation).

Arreté = (baseline - final) / baseline of the block's surprise; coherence_gain is the
Arreté; the TIES-merge weight mixes composite and Arreté (weights in config).
Low relevance with novelty and coherence sends the block's question to the antechamber.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.domain.night_flux import arrete, phi
from agent.domain.tables import need, scalar_fields

# seed 001 §3.5 live-zone criterion "explicit insight markers (user confirmation,
# breakthrough language)"; a keyword heuristic, named so in every zone it marks
INSIGHT_MARKERS = re.compile(
    r"\b(now i (see|get it|understand)|that makes sense|makes sense now|i see now|"
    r"that'?s (it|exactly it)|exactly!|aha|eureka|breakthrough|i (just )?realiz(e|ed)|"
    r"it clicked|that clarifies|i finally (get|understand))\b",
    re.IGNORECASE,
)
INSIGHT_DETECTOR = "insight-marker keyword heuristic"


@dataclass(frozen=True)
class SalienceConfig:
    weight_p: float
    weight_c: float
    weight_id: float
    level_weights: tuple[float, float, float]
    live_zone_spike_sigma: float
    live_zone_min_arrete: float
    live_zone_max_interrogative_distance: float
    relevance_min_similarity: float
    antechamber_min_coherence: float
    ties_weight_composite: float
    ties_weight_arrete: float

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> SalienceConfig:
        out = scalar_fields(cls, t, {"salience_weight_p": "weight_p",
                                     "salience_weight_c": "weight_c",
                                     "salience_weight_id": "weight_id"},
                            skip=("level_weights",))
        lw = [float(x) for x in need(t, "salience_level_weights")]
        return cls(**out, level_weights=(lw[0], lw[1], lw[2]))


@dataclass(frozen=True)
class TurnSignal:
    """One turn as salience sees it."""

    role: str
    z: float
    signal: float | None
    vector: npt.NDArray[np.float32] | None
    new_information: bool = False  # an entry-gate signal of new information fired
    insight: bool = False  # insight-marker heuristic fired


@dataclass(frozen=True)
class LevelScore:
    P: float
    C: float
    ID: float
    composite: float
    unit: tuple[int, int]  # turn indices within the block

    def as_dict(self) -> dict[str, Any]:
        return {"P": round(self.P, 4), "C": round(self.C, 4), "ID": round(self.ID, 4),
                "composite": round(self.composite, 4), "turns": list(self.unit)}


@dataclass
class BlockSalience:
    sentence: LevelScore
    exchange: LevelScore
    theme: LevelScore
    composite: float
    arrete: float
    ties_merge_weight: float
    interrogative_distance: float
    centroid_index: int | None  # nearest active centroid, when relevant
    relevant: bool
    antechamber: bool
    live: list[bool] = field(default_factory=list)  # per exchange
    reasons: list[list[str]] = field(default_factory=list)  # why each exchange is live

    def scores_json(self) -> dict[str, Any]:
        return {
            "sentence_level": self.sentence.as_dict(),
            "exchange_level": self.exchange.as_dict(),
            "theme_level": self.theme.as_dict(),
            "composite": round(self.composite, 4),
            "interrogative_distance": round(self.interrogative_distance, 4),
            "relevant": self.relevant,
            "antechamber": self.antechamber,
            "implicit_question": "proxy: the block's user turns (no LLM question distillation)",
        }


def _unit(v: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    n = float(np.linalg.norm(v))
    return v if n == 0 else (v / n).astype(np.float32)


def _clip01(x: float) -> float:
    return float(min(1.0, max(0.0, x)))


def _centroid(vectors: Sequence[npt.NDArray[np.float32] | None]) -> npt.NDArray[np.float32] | None:
    vs = [v for v in vectors if v is not None]
    return _unit(np.mean(np.stack(vs), axis=0)) if vs else None


def coherence(vectors: Sequence[npt.NDArray[np.float32] | None],
              block_centroid: npt.NDArray[np.float32] | None) -> float:
    """Mean cosine of consecutive turns (one turn: cosine to the block centroid)."""
    vs = [_unit(v) for v in vectors if v is not None]
    if not vs:
        return 0.0
    if len(vs) == 1:
        return 1.0 if block_centroid is None else _clip01(float(np.dot(vs[0], block_centroid)))
    return _clip01(float(np.mean([np.dot(a, b) for a, b in pairwise(vs)])))


def relevance(question: npt.NDArray[np.float32] | None,
              centroids: npt.NDArray[np.float32] | None) -> tuple[float, int | None]:
    """(similarity to the nearest centroid, its index); (0, None) without centroids."""
    if question is None or centroids is None or len(centroids) == 0:
        return 0.0, None
    sims = centroids @ question
    best = int(np.argmax(sims))
    return _clip01(float(sims[best])), best


def _question(turns: Sequence[TurnSignal]) -> npt.NDArray[np.float32] | None:
    users = [t.vector for t in turns if t.role == "user" and t.vector is not None]
    return _centroid(users) if users else _centroid([t.vector for t in turns])


def unit_arrete(turns: Sequence[TurnSignal]) -> float:
    vals = [t.signal for t in turns if t.signal is not None]
    return arrete(vals[0], vals[-1]) if len(vals) >= 2 else 0.0


def score_block(
    turns: Sequence[TurnSignal],
    exchange_bounds: Sequence[tuple[int, int]],
    centroids: npt.NDArray[np.float32] | None,
    block_arrete: float,
    novel: bool,
    cfg: SalienceConfig,
) -> BlockSalience:
    """Three-level P/C/ID, composite, TIES weight, live exchanges, relevance/antechamber."""
    block_c = _centroid([t.vector for t in turns])

    def level(lo: int, hi: int) -> LevelScore:
        unit = turns[lo:hi + 1]
        p = float(np.mean([phi(t.z) for t in unit]))
        c = coherence([t.vector for t in unit], block_c)
        sim, _ = relevance(_question(unit), centroids)
        comp = cfg.weight_p * p + cfg.weight_c * c + cfg.weight_id * sim
        return LevelScore(p, c, sim, comp, (lo, hi))

    sentences = [level(i, i) for i in range(len(turns))]
    xs = [level(lo, hi) for lo, hi in exchange_bounds]
    theme = level(0, len(turns) - 1)
    best_s = max(sentences, key=lambda s: s.composite)
    best_x = max(xs, key=lambda s: s.composite)
    lw = cfg.level_weights
    composite = lw[0] * best_s.composite + lw[1] * best_x.composite + lw[2] * theme.composite
    ties = (cfg.ties_weight_composite * composite
            + cfg.ties_weight_arrete * _clip01(block_arrete))
    sim, idx = relevance(_question(turns), centroids)
    relevant = idx is not None and sim >= cfg.relevance_min_similarity
    antechamber = (not relevant and novel and idx is not None
                   and cfg.antechamber_min_coherence <= theme.C)
    live: list[bool] = []
    reasons: list[list[str]] = []
    for (lo, hi), x in zip(exchange_bounds, xs, strict=True):
        unit = turns[lo:hi + 1]
        why: list[str] = []
        if any(t.z > cfg.live_zone_spike_sigma for t in unit):
            why.append("spike_2sigma")
        if unit_arrete(unit) > cfg.live_zone_min_arrete:
            why.append("arrete")
        if centroids is not None and len(centroids) and cfg.live_zone_max_interrogative_distance > (
                1.0 - x.ID):
            why.append("near_preoccupation")
        if any(t.insight for t in unit):
            why.append("insight_marker_heuristic")
        if any(t.new_information for t in unit):
            why.append("entry_gate_new_information")
        live.append(bool(why))
        reasons.append(why)
    return BlockSalience(
        sentence=best_s, exchange=best_x, theme=theme, composite=composite,
        arrete=block_arrete, ties_merge_weight=ties, interrogative_distance=1.0 - sim,
        centroid_index=idx if relevant else None, relevant=relevant,
        antechamber=antechamber, live=live, reasons=reasons,
    )
