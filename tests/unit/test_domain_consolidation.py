"""Consolidation and DMN rules (agent/domain/consolidation.py, agent/domain/dmn.py)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np

from agent.config import load_settings
from agent.domain import consolidation as c
from agent.domain import dmn

S = load_settings()
CFG = c.ConsolidationConfig.from_table(S.consolidation)
SAFE = c.SafetyConfig.from_table(S.compulsion_safety)
DMN = dmn.DmnConfig.from_table(S.idle)
NOW = datetime(2026, 11, 23, tzinfo=UTC)


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_config_tables_reach_the_rules() -> None:
    assert CFG.insight_min_sources == 3 and CFG.insight_min_similarity == 0.65
    assert CFG.contradiction_band == (0.5, 0.85)
    assert SAFE.cap == 0.92 and SAFE.dominance_share == 0.4
    assert DMN.interval_minutes == (1, 5, 15, 30) and DMN.rumination_cap == 3


def test_similar_groups_need_three_close_members() -> None:
    vecs = np.stack([unit(1, 0, 0), unit(1, 0.1, 0), unit(1, 0, 0.1), unit(0, 1, 0),
                     unit(0, 1, 0.05)])
    assert c.similar_groups(vecs, 0.65, 3) == [[0, 1, 2]]  # the pair [3, 4] is too small
    assert c.similar_groups(vecs, 0.65, 2) == [[0, 1, 2], [3, 4]]


NOTE = "Remember this: Hetzner pricing is about three times cheaper than AWS, note {}"


def test_near_duplicates_need_closeness_shared_words_and_no_contradiction() -> None:
    """issue 39: a group is close to its seed (cosine), shares its informative words
    (counters left out) and contradicts none of its members."""
    texts = [NOTE.format(1), NOTE.format(2), "I love hiking in the Alps every summer.",
             "Hiking in the Swiss Alps is my favourite summer holiday.", NOTE.format(3),
             "Remember this: Hetzner pricing is not cheaper than AWS, note 4"]
    same = unit(1, 0, 0)
    vecs = np.stack([same, unit(1, 0.05, 0), unit(0, 1, 0), unit(0, 1, 0.1), unit(1, 0, 0.05),
                     same])
    assert c.word_overlap(texts[0], texts[1]) == 1.0
    assert c.word_overlap(texts[2], texts[3]) == 0.6  # related, not a restatement
    assert c.near_duplicate_groups(vecs, texts, CFG) == [[0, 1, 4]]  # the negation stays out
    # words in common are not enough: the vectors must be close too
    far = np.stack([unit(1, 0, 0), unit(0, 0, 1)])
    assert c.near_duplicate_groups(far, texts[:2], CFG) == []
    assert c.near_duplicate_groups(vecs[:0], [], CFG) == []


def test_the_most_informative_source_is_the_fullest_then_the_newest() -> None:
    assert c.most_informative(["I live in Berlin.", "I live in Berlin, Germany, near the canal.",
                               "I live in Berlin."]) == 1
    assert c.most_informative([NOTE.format(n) for n in (1, 22, 3)]) == 2  # a tie: the newest


def test_pairs_in_band() -> None:
    vecs = np.stack([unit(1, 0), unit(1, 1), unit(0, 1)])  # 45 degrees apart: 0.707
    assert [(i, j) for i, j, _ in c.pairs_in_band(vecs, (0.5, 0.85))] == [(0, 1), (1, 2)]


def test_decay_rules() -> None:
    old = NOW - timedelta(days=100)
    assert c.should_decay(0.5, 0, old, "fact", None, NOW, CFG)
    assert not c.should_decay(0.5, 3, old, "fact", None, NOW, CFG)  # accessed enough
    assert not c.should_decay(0.95, 0, old, "fact", None, NOW, CFG)  # landmark
    assert not c.should_decay(0.5, 0, old, "correction", None, NOW, CFG)  # corrections
    assert not c.should_decay(0.5, 0, NOW - timedelta(days=10), "fact", None, NOW, CFG)
    assert not c.should_decay(0.5, 0, old, "fact", NOW - timedelta(days=1), NOW, CFG)


def test_strengthening_is_bounded() -> None:
    assert c.strengthen(0.5, 1, CFG) == 0.55
    assert c.strengthen(0.5, 10, CFG) == 0.65  # at most +0.15 per run
    assert c.strengthen(0.95, 10, CFG) == 1.0
    assert c.strengthen(0.5, 0, CFG) == 0.5


def test_promotion_levels() -> None:
    assert c.promotion_level(4, 40, CFG) is None
    assert c.promotion_level(5, 13, CFG) is None
    assert c.promotion_level(5, 14, CFG) == 1
    assert c.promotion_level(10, 29, CFG) == 1
    assert c.promotion_level(10, 30, CFG) == 0


def test_compulsion_safety() -> None:
    assert c.diminished_gain(0.05, 1, SAFE) == 0.05  # log2(2) = 1
    assert abs(c.diminished_gain(0.05, 7, SAFE) - 0.05 / 3) < 1e-9  # log2(8) = 3
    assert c.capped(0.99, SAFE) == 0.92
    damped = c.dominance_damped({"a": 0.9, "b": 0.3, "c": 0.3}, SAFE)
    assert damped == {"a": 0.9 * 0.95}
    assert c.dominance_damped({"a": 0.9}, SAFE) == {}  # a lone goal cannot dominate others
    assert c.dominance_damped({"a": 0.5, "b": 0.5}, SAFE) == {}  # equal leaders: no-op
    assert c.dominance_damped({"a": 0.5, "b": 0.4}, SAFE) == {"a": 0.5 * 0.95}
    assert c.utility_damped(0.8, 25, 2, SAFE) == 0.8 * 0.95
    assert c.utility_damped(0.8, 25, 10, SAFE) is None
    assert c.utility_damped(0.8, 5, 0, SAFE) is None


def test_intentions_and_urgency() -> None:
    assert c.intention_kind("Remind me to call the bank on Friday") == "reminder"
    assert c.intention_kind("I promise I'll send the slides") == "promise"
    assert c.intention_kind("I need to renew my passport") == "plan"
    assert c.intention_kind("we didn't finish the budget, let's continue tomorrow") == "unfinished"
    assert c.intention_kind("The sky is blue") is None
    created = NOW - timedelta(days=100)
    assert c.intention_urgency(0.5, NOW - timedelta(days=30), NOW, 90, 0.02) == 0.5
    assert abs(c.intention_urgency(0.5, created, NOW, 90, 0.02) - 0.3) < 1e-9


def test_correction_conditions() -> None:
    fails, fine = c.correction_conditions(
        "Correction: the deploy script fails when the VPN is on; it is fine when run locally.")
    assert fails == "the VPN is on" and fine == "run locally"
    assert c.correction_conditions("Actually it's Tuesday") == (None, None)


def test_gate_tuning_moves_slowly_and_is_bounded() -> None:
    t = c.GateTuning()
    assert c.tuned_threshold(0.3, 2, 0, 0, t) == 0.28
    assert c.tuned_threshold(0.3, 0, 6, 10, t) == 0.31
    assert c.tuned_threshold(0.3, 0, 0, 0, t) == 0.3
    assert c.tuned_threshold(0.11, 50, 0, 0, t) == 0.1


def test_heartbeat_follows_idle_time() -> None:
    assert dmn.heartbeat_seconds(0, DMN) == 60
    assert dmn.heartbeat_seconds(11 * 60, DMN) == 5 * 60
    assert dmn.heartbeat_seconds(2 * 3600, DMN) == 15 * 60
    assert dmn.heartbeat_seconds(5 * 3600, DMN) == 30 * 60
    fast = dmn.DmnConfig.from_table({**S.idle, "seconds_per_minute": 0.01})
    assert dmn.heartbeat_seconds(0, fast) == 0.01


def item(i: str, **kw: float) -> dmn.Surfaceable:
    base = {"recency": 0.0, "gut_intensity": 0.0, "association": 0.0, "access": 0.0}
    base.update(kw)
    return dmn.Surfaceable(i, 2, i, **base)


def test_surfacing_follows_weights_with_noise() -> None:
    items = [item("fresh", recency=1.0), item("intense", gut_intensity=1.0)]
    rng = random.Random(3)
    picks = [dmn.surface(items, {"recency": 0.9, "gut_intensity": 0.1}, 0.1, rng)
             for _ in range(200)]
    fresh = sum(p is not None and p[0].id == "fresh" for p in picks)
    assert fresh > 190  # the weighted feature wins almost always
    noisy = [dmn.surface(items, {"recency": 0.5, "gut_intensity": 0.5}, 0.1, rng)
             for _ in range(200)]
    assert 50 < sum(p is not None and p[0].id == "fresh" for p in noisy) < 150  # noise decides


def test_weights_evolve_from_outcomes() -> None:
    w = dict.fromkeys(dmn.FEATURES, 0.25)
    up = dmn.evolve_weights(w, {"recency": 0.2, "access": 0.1}, True, 0.02)
    assert up["recency"] > 0.25 and abs(sum(up.values()) - 1) < 1e-4
    down = dmn.evolve_weights(w, {"recency": 0.2}, False, 0.02)
    assert down["recency"] < 0.25


def test_classify_and_rumination() -> None:
    assert dmn.classify(0.6, 0.0, False, 0.5) == "self_prompt"
    assert dmn.classify(0.1, 0.7, False, 0.5) == "creative_impulse"
    assert dmn.classify(0.1, 0.7, True, 0.5) == "discarded"  # something is pressing
    assert dmn.classify(0.1, 0.1, False, 0.5) == "discarded"
    assert not dmn.ruminating(2, DMN) and dmn.ruminating(3, DMN)


def test_proactive_triggers() -> None:
    a, b = unit(1, 0, 0), unit(0, 1, 0)
    assert dmn.triggers(a, b, "now something else", DMN) == ["topic_shift"]
    assert dmn.triggers(a, a, "great, that works now", DMN) == ["task_completion"]
    assert dmn.triggers(None, a, "ok bye, talk later", DMN) == ["winding_down"]


def test_gut_signal_is_zero_while_blank() -> None:
    zero = dmn.gut_delta([None, None, None], [0.5, 0.25, 0.25], unit(1, 0), 2)
    assert not zero.any()
    delta = dmn.gut_delta([unit(1, 0), None, unit(0, 1)], [0.5, 0.25, 0.25], unit(0, 1), 2)
    # missing L1: the rest renormalise to 2/3 L0 + 1/3 L2
    assert np.allclose(delta, unit(0, 1) - (2 / 3 * unit(1, 0) + 1 / 3 * unit(0, 1)))
