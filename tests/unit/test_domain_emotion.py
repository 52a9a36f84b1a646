"""The emotional state's pure rules (seed 000 §3, §4.2): the lexicon heuristic, decay,
discrete labels, the prompt's tendency line, resonance and recall's mood term."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from agent.config import load_settings
from agent.domain import emotion as e
from agent.domain.recall import Candidate, QueryContext, RecallConfig, recall_pipeline

CFG = e.EmotionConfig.from_table(load_settings().emotion)
RCFG = RecallConfig.from_table(load_settings().recall)
NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)


def test_config_is_the_seed_temperament_decay_and_weights() -> None:
    assert CFG.temperament == e.EmotionState(0.55, 0.5, 0.65)  # seed 000 §3.3
    assert CFG.decay_per_hour == 0.05 and CFG.noise_sigma == 0.02  # seed 000 §3.3
    assert (CFG.weight_valence, CFG.weight_energy, CFG.weight_openness) == (1.3, 1.0, 0.8)
    assert 0 < CFG.mood_max_boost <= 0.1


def test_lexicon_reads_negative_positive_energy_and_openness_cues() -> None:
    bad = e.lexicon_signal("I'm so frustrated, the build is broken again")
    assert bad.valence < -0.5 and bad.energy > 0 and {"frustrated", "broken"} <= set(bad.cues)
    good = e.lexicon_signal("Great, that works, thank you")
    assert good.valence > 0.5 and "thank you" in good.cues
    assert e.lexicon_signal("honestly I feel tired").openness > 0.5
    assert e.lexicon_signal("honestly I feel tired").energy < 0
    assert e.lexicon_signal("whatever, just do it").openness < -0.5
    assert e.lexicon_signal("I'm excited!!").energy > 0.8
    neutral = e.lexicon_signal("The meeting is at 3 pm in room B.")
    assert (neutral.valence, neutral.energy, neutral.openness, neutral.cues) == (0, 0, 0, ())
    # "content" the noun is no feeling; "content" the feeling is
    assert e.lexicon_signal("Update the page content and the content type header").cues == ()
    assert e.lexicon_signal("Honestly, I'm content with it").valence > 0.5
    assert e.lexicon_signal("nothing works").valence < 0  # not "works"


def test_negation_flips_the_next_cue_within_its_clause() -> None:
    assert e.lexicon_signal("I am happy").valence > 0
    not_happy = e.lexicon_signal("I am not happy")
    assert not_happy.valence < 0 and not_happy.cues == ("not happy",)
    assert 0 < e.lexicon_signal("not bad").valence < abs(e.lexicon_signal("bad").valence)
    assert e.lexicon_signal("I don't hate it").valence > 0
    # the negator stops at the clause and at the first cue: "thanks" stays thanks
    both = e.lexicon_signal("not bad, thanks")
    assert both.cues == ("not bad", "thanks") and both.valence > 0.5


def test_decay_halves_the_distance_to_the_temperament_every_ln2_over_rate_hours() -> None:
    start = e.EmotionState(-0.45, 1.0, 0.15)
    half_life = math.log(2) / CFG.decay_per_hour  # ~13.9 h
    halfway = e.decay(start, half_life, CFG)
    t = CFG.temperament
    assert halfway.valence == pytest.approx((start.valence + t.valence) / 2)
    assert halfway.energy == pytest.approx((start.energy + t.energy) / 2)
    assert halfway.openness == pytest.approx((start.openness + t.openness) / 2)
    assert e.decay_factor(2, CFG) == pytest.approx(0.905, abs=1e-3)  # seed 000 §3.3
    assert e.decay_factor(20, CFG) == pytest.approx(0.368, abs=1e-3)
    assert e.decay(start, 0, CFG) == start
    far = e.decay(start, 200, CFG)
    assert abs(far.valence - t.valence) < 1e-3


def test_noise_comes_only_with_an_rng_and_a_sigma() -> None:
    start = e.EmotionState(-0.2, 0.7, 0.3)
    plain = e.decay(start, 24, CFG)
    noisy = e.decay(start, 24, CFG, random.Random(7))
    assert noisy != plain and abs(noisy.valence - plain.valence) < 5 * CFG.noise_sigma
    assert e.decay(start, 24, replace(CFG, noise_sigma=0.0), random.Random(7)) == plain
    # back-to-back turns (no gap) get no noise at all
    assert e.decay(start, 0, CFG, random.Random(7)) == start


def test_a_step_moves_toward_the_signal_and_stays_in_bounds() -> None:
    s = CFG.temperament
    for _ in range(10):
        s = e.apply_signal(s, e.lexicon_signal("so frustrated and angry, this is broken"), CFG)
    assert s.valence == -1.0 and 0 <= s.energy <= 1 and 0 <= s.openness <= 1
    assert e.apply_signal(CFG.temperament, e.Signal(), CFG) == CFG.temperament


def test_labels_resolve_to_the_nearest_emotion_with_the_seed_weights() -> None:
    for name, (v, en, o, _r) in e.EMOTIONS.items():
        assert e.label(e.EmotionState(v, en, o), CFG) == name
    assert e.label(e.EmotionState(-0.6, 0.8, 0.3), CFG) == "frustrated"
    assert e.label(e.EmotionState(-0.6, 0.2, 0.5), CFG) == "sad"
    top = e.resolve(e.EmotionState(0.8, 0.9, 0.7), CFG)
    assert top[0] == ("excited", 1.0) and len(top) == 3 and top[1][1] < 1.0
    # valence weighs more than openness: the same gap on valence is farther
    a, b = e.EmotionState(0.0, 0.5, 0.5), e.EmotionState(0.2, 0.5, 0.5)
    c = e.EmotionState(0.0, 0.5, 0.7)
    assert e.distance(a, b, CFG) > e.distance(a, c, CFG)
    assert len(e.EMOTIONS) >= 30 and {r for *_x, r in e.EMOTIONS.values()} >= {
        "positive-high", "positive-low", "negative-high", "negative-low", "neutral-high", "open"}


def test_the_prompt_line_is_a_tendency_with_the_coordinates() -> None:
    near = e.render(CFG.temperament, CFG)
    assert "near your usual baseline" in near and "not your facts" in near
    upset = e.render(e.EmotionState(-0.32, 0.61, 0.48), CFG)
    assert upset.startswith("You feel mildly") and "valence -0.32" in upset
    assert "energy 0.61" in upset and "openness 0.48" in upset
    assert "strongly frustrated" in e.render(e.EmotionState(-0.7, 0.8, 0.3), CFG)


def test_resonance_follows_the_seed_and_is_bounded() -> None:
    s = e.EmotionState(-0.6, 0.75, 0.3)  # frustrated
    assert e.resonance(s, s, CFG, importance=1.0) == pytest.approx(1.0)  # seed 000 §4.2
    assert e.resonance(s, s, CFG) == pytest.approx(0.9)
    same_region = e.EmotionState(-0.5, 0.8, 0.45)  # anxious
    assert e.resonance(same_region, s, CFG) < e.resonance(s, s, CFG)
    opposite = e.EmotionState(0.8, 0.2, 0.9)
    assert e.resonance(opposite, s, CFG) < e.resonance(same_region, s, CFG)
    cue = e.MoodCue(s, CFG)
    assert e.mood_term(s, cue) == pytest.approx(CFG.mood_max_boost)
    rng = random.Random(3)
    for _ in range(200):
        imprint = e.EmotionState(rng.uniform(-1, 1), rng.random(), rng.random())
        state = e.EmotionState(rng.uniform(-1, 1), rng.random(), rng.random())
        term = e.mood_term(imprint, e.MoodCue(state, CFG))
        assert -CFG.mood_max_boost <= term <= CFG.mood_max_boost
    assert e.mood_term(None, cue) == 0.0 and e.mood_term(s, None) == 0.0


def _pair(imprint_a: e.EmotionState | None, imprint_b: e.EmotionState | None
          ) -> list[Candidate]:
    return [Candidate(id="memory:a", kind="memory", content="deploy failed", created_at=NOW,
                      dense_rank=1, similarity=0.7, emotion=imprint_a),
            Candidate(id="memory:b", kind="memory", content="deploy failed too",
                      created_at=NOW, dense_rank=2, similarity=0.7, emotion=imprint_b)]


def test_the_mood_term_is_exactly_neutral_without_a_mood_or_an_imprint() -> None:
    """bench runs have no emotional state: their scores must not move by a bit."""
    upset = e.EmotionState(-0.6, 0.75, 0.3)
    calm = e.EmotionState(0.55, 0.3, 0.6)
    plain = recall_pipeline(_pair(None, None), now=NOW, cfg=RCFG, k=5)
    no_mood = recall_pipeline(_pair(calm, upset), now=NOW, cfg=RCFG, k=5)
    no_imprint = recall_pipeline(_pair(None, None), now=NOW, cfg=RCFG, k=5,
                                 context=QueryContext(mood=e.MoodCue(upset, CFG)))
    for out in (no_mood, no_imprint):
        assert [(i.id, i.score) for i in out.items] == [(i.id, i.score) for i in plain.items]
        assert all("mood" not in i.components for i in out.items)


def test_a_congruent_imprint_lifts_a_near_tie_within_the_bound() -> None:
    upset = e.EmotionState(-0.6, 0.75, 0.3)
    calm = e.EmotionState(0.55, 0.3, 0.6)
    plain = recall_pipeline(_pair(calm, upset), now=NOW, cfg=RCFG, k=5)
    assert [i.id for i in plain.items] == ["memory:a", "memory:b"]
    moody = recall_pipeline(_pair(calm, upset), now=NOW, cfg=RCFG, k=5,
                            context=QueryContext(mood=e.MoodCue(upset, CFG)))
    assert [i.id for i in moody.items] == ["memory:b", "memory:a"]
    base = {i.id: i.score for i in plain.items}
    for item in moody.items:
        assert abs(item.score - base[item.id]) <= CFG.mood_max_boost * base[item.id] + 1e-12
        assert item.components["mood"] != 0
    # off by config: mood_max_boost 0 leaves the order as it was
    off = recall_pipeline(_pair(calm, upset), now=NOW, cfg=RCFG, k=5, context=QueryContext(
        mood=e.MoodCue(upset, replace(CFG, mood_max_boost=0.0))))
    assert [i.id for i in off.items] == ["memory:a", "memory:b"]


def test_an_llm_judgement_is_read_only_when_it_is_the_json_asked_for() -> None:
    sig = e.parse_judgement({"valence": -0.8, "energy": 0.4, "openness": 2})
    assert sig == e.Signal(-0.8, 0.4, 1.0, ("llm",))
    assert e.parse_judgement({"valence": "low", "energy": 0, "openness": 0}) is None
    assert e.parse_judgement(["x"]) is None
    assert e.judge_messages("hi")[1]["content"] == "hi"


def test_an_imprint_reads_back_from_its_json() -> None:
    assert e.EmotionState.from_mapping({"valence": -2, "energy": 0.5, "openness": 0.4,
                                        "label": "x"}) == e.EmotionState(-1.0, 0.5, 0.4)
    assert e.EmotionState.from_mapping(None) is None
    assert e.EmotionState.from_mapping({"valence": 0.1}) is None
