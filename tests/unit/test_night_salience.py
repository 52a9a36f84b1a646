"""Salience (seed 001 §3.3-§3.6, §8.5): three levels, live exchanges, the antechamber."""

from __future__ import annotations

import numpy as np
import pytest

from agent.config import load_settings
from agent.domain.night_salience import (
    INSIGHT_MARKERS,
    SalienceConfig,
    TurnSignal,
    coherence,
    score_block,
)

CFG = SalienceConfig.from_table(load_settings().night_cycle)


def u(*xs: float) -> np.ndarray:
    v = np.array(xs, np.float32)
    return v / np.linalg.norm(v)


def turn(role: str, vec: np.ndarray, z: float = 0.0, signal: float | None = 0.5,
         **kw: bool) -> TurnSignal:
    return TurnSignal(role=role, z=z, signal=signal, vector=vec, **kw)


def test_config_comes_from_the_seed_table() -> None:
    assert (CFG.live_zone_spike_sigma, CFG.live_zone_min_arrete) == (2.0, 0.3)
    assert CFG.live_zone_max_interrogative_distance == 0.2
    assert CFG.level_weights == (0.3333, 0.3333, 0.3334)


def test_equal_weights_reproduce_the_seeds_example_composite(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """seed 001 §3.4: sentence (0.8, 0.9, 0.7), exchange (0.75, 0.85, 0.72), theme (0.7,
    0.88, 0.65) -> composite 0.78, through score_block itself. Its three measures are set
    per unit (P: each turn's z through phi; C and ID: looked up by the unit's turns, which
    are one-hot vectors), so the levels, the pick of the best unit and the composite are
    score_block's own."""
    import agent.domain.night_salience as ns

    # turns 0, 1, 2; sentences (0), (1), (2); one exchange (0, 1); the theme (0, 1, 2)
    c = {(0,): 0.9, (1,): 0.5, (2,): 0.5, (0, 1): 0.85, (0, 1, 2): 0.88}
    i = {(0,): 0.7, (1,): 0.5, (2,): 0.5, (0, 1): 0.72, (0, 1, 2): 0.65}

    def members(vectors: list[np.ndarray]) -> tuple[int, ...]:
        return tuple(sorted({int(np.argmax(v)) for v in vectors}))

    monkeypatch.setattr(ns, "phi", lambda z: z)
    monkeypatch.setattr(ns, "coherence", lambda vectors, _block: c[members(vectors)])
    monkeypatch.setattr(ns, "relevance", lambda question, _centroids: (
        i[tuple(int(k) for k in np.flatnonzero(question > 1e-6))], 0))
    # P per unit: the mean of its turns' z: (0.8), (0.7), (0.6), (0.75), (0.7)
    turns = [turn("user", u(1, 0, 0), z=0.8), turn("user", u(0, 1, 0), z=0.7),
             turn("user", u(0, 0, 1), z=0.6)]
    sal = score_block(turns, [(0, 1)], np.stack([u(1, 1, 1)]), 0.0, novel=False, cfg=CFG)
    levels = [(0.8, 0.9, 0.7), (0.75, 0.85, 0.72), (0.7, 0.88, 0.65)]
    scored = (sal.sentence, sal.exchange, sal.theme)
    assert [lv.unit for lv in scored] == [(0, 0), (0, 1), (0, 2)]
    assert [(lv.P, lv.C, lv.ID) for lv in scored] == [pytest.approx(x) for x in levels]
    weighted = sum(w * (CFG.weight_p * p + CFG.weight_c * c_ + CFG.weight_id * i_)
                   for w, (p, c_, i_) in zip(CFG.level_weights, levels, strict=True))
    assert sal.composite == pytest.approx(weighted, abs=1e-9)
    assert sal.composite == pytest.approx(0.78, abs=0.01)


def test_coherence_is_the_cosine_of_consecutive_turns() -> None:
    assert coherence([u(1, 0), u(1, 0), u(0, 1)], None) == pytest.approx(0.5)
    assert coherence([u(1, 0)], u(1, 1)) == pytest.approx(np.sqrt(0.5), abs=1e-6)


def test_levels_report_their_best_unit() -> None:
    centroids = np.stack([u(1, 0, 0)])
    turns = [turn("user", u(0, 1, 0)), turn("assistant", u(0, 1, 0.1)),
             turn("user", u(1, 0, 0), z=2.5), turn("assistant", u(1, 0.1, 0))]
    sal = score_block(turns, [(0, 1), (2, 3)], centroids, 0.0, novel=True, cfg=CFG)
    assert sal.sentence.unit == (2, 2)  # the spiking turn, on the preoccupation
    assert sal.exchange.unit == (2, 3)
    assert sal.theme.unit == (0, 3)
    assert abs(sal.exchange.ID - 1.0) < 1e-6
    assert sal.composite == pytest.approx(
        sum(w * lv.composite for w, lv in zip(CFG.level_weights,
                                               (sal.sentence, sal.exchange, sal.theme),
                                               strict=True)))
    assert sal.ties_merge_weight == pytest.approx(0.5 * sal.composite)  # arrete 0


def test_each_live_criterion_marks_its_exchange() -> None:
    far = np.stack([u(0, 0, 1)])
    x = u(1, 0, 0)
    cases = {
        "spike_2sigma": [turn("user", x, z=2.1), turn("assistant", x)],
        "arrete": [turn("user", x, signal=1.0), turn("assistant", x, signal=0.6)],
        "insight_marker_heuristic": [turn("user", x), turn("assistant", x, insight=True)],
        "entry_gate_new_information": [turn("user", x, new_information=True),
                                       turn("assistant", x)],
    }
    for reason, turns in cases.items():
        sal = score_block(turns, [(0, 1)], far, 0.0, novel=False, cfg=CFG)
        assert sal.live == [True] and sal.reasons == [[reason]], reason
    calm = [turn("user", x, z=1.9), turn("assistant", x, signal=0.4)]
    assert score_block(calm, [(0, 1)], far, 0.0, novel=False, cfg=CFG).live == [False]
    near = score_block(calm, [(0, 1)], np.stack([x]), 0.0, novel=False, cfg=CFG)
    assert near.reasons == [["near_preoccupation"]]


def test_novel_coherent_but_irrelevant_content_goes_to_the_antechamber() -> None:
    x = u(1, 0, 0)
    turns = [turn("user", x), turn("assistant", x)]
    far, near = np.stack([u(0, 1, 0)]), np.stack([u(1, 0.2, 0)])
    sal = score_block(turns, [(0, 1)], far, 0.0, novel=True, cfg=CFG)
    assert (sal.relevant, sal.antechamber, sal.centroid_index) == (False, True, None)
    assert sal.interrogative_distance == pytest.approx(1.0)
    assert not score_block(turns, [(0, 1)], far, 0.0, novel=False, cfg=CFG).antechamber
    rel = score_block(turns, [(0, 1)], near, 0.0, novel=True, cfg=CFG)
    assert (rel.relevant, rel.antechamber, rel.centroid_index) == (True, False, 0)
    incoherent = [turn("user", x), turn("assistant", u(0, 0, 1))]
    assert not score_block(incoherent, [(0, 1)], far, 0.0, novel=True, cfg=CFG).antechamber


def test_insight_markers_are_a_keyword_heuristic() -> None:
    assert INSIGHT_MARKERS.search("Oh! That makes sense now, thanks")
    assert INSIGHT_MARKERS.search("now I understand why it failed")
    assert not INSIGHT_MARKERS.search("What time is the dentist appointment?")
