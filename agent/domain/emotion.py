"""The emotional state (seed 000 §3) and mood-congruent recall (seed 000 §4.2): pure rules.

A state is a point (valence ∈ [-1, 1], energy ∈ [0, 1], openness ∈ [0, 1]). Between
turns it decays exponentially toward the temperament (seed 000 §3.3); each user turn
moves it a step toward that turn's signal, judged by an LLM when one is configured or
else by the **lexicon heuristic** below (a small English word list with negation, not a
model: it says "detector": "lexicon-heuristic" wherever it is stored). The state is
named by its nearest discrete emotions (weighted distance, seed 000 §3.2) and reaches
the prompt as a tendency line, never as facts. A memory formed in a state carries it as
an imprint; recall may favour memories whose imprint resonates with the current state
(seed 000 §4.2), by at most ±mood_max_boost of an item's relevance.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent.domain.tables import scalar_fields

LEXICON_DETECTOR = "lexicon-heuristic"


@dataclass(frozen=True)
class EmotionConfig:
    temperament_valence: float
    temperament_energy: float
    temperament_openness: float
    decay_per_hour: float
    noise_sigma: float
    step: float
    weight_valence: float
    weight_energy: float
    weight_openness: float
    baseline_below: float
    strong_above: float
    mood_congruence: bool
    mood_max_boost: float
    resonance_valence: float
    resonance_energy: float
    resonance_openness: float
    resonance_importance: float
    bonus_same_emotion: float
    bonus_same_region: float

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> EmotionConfig:
        return cls(**scalar_fields(cls, t))

    @property
    def temperament(self) -> EmotionState:
        return EmotionState(self.temperament_valence, self.temperament_energy,
                            self.temperament_openness)


@dataclass(frozen=True)
class EmotionState:
    valence: float
    energy: float
    openness: float

    def clipped(self) -> EmotionState:
        return EmotionState(_clip(self.valence, -1.0, 1.0), _clip(self.energy, 0.0, 1.0),
                            _clip(self.openness, 0.0, 1.0))

    def as_dict(self) -> dict[str, float]:
        return {"valence": round(self.valence, 4), "energy": round(self.energy, 4),
                "openness": round(self.openness, 4)}

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any] | None) -> EmotionState | None:
        """An imprint ({"valence", "energy", "openness", ...}) as a state; None when absent
        or malformed."""
        if not m:
            return None
        try:
            return cls(float(m["valence"]), float(m["energy"]), float(m["openness"])).clipped()
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Signal:
    """What one turn says about the state: a direction per axis in [-1, 1]."""

    valence: float = 0.0
    energy: float = 0.0
    openness: float = 0.0
    cues: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"dv": round(self.valence, 4), "de": round(self.energy, 4),
                "do": round(self.openness, 4), "cues": list(self.cues)}


def _clip(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x


# -- decay (seed 000 §3.3) -----------------------------------------------------------

def decay_factor(hours: float, cfg: EmotionConfig) -> float:
    """e^(-rate * hours): 1 for no gap, ~0.90 after 2 h, ~0.37 after 20 h."""
    return math.exp(-cfg.decay_per_hour * max(0.0, hours))


def decay(state: EmotionState, hours: float, cfg: EmotionConfig,
          rng: random.Random | None = None) -> EmotionState:
    """The state `hours` later: pulled toward the temperament by decay_factor, plus
    Gaussian noise when an `rng` is given (seed sigma = noise_sigma). cogd choice: the noise
    is scaled by sqrt(1 - factor), so back-to-back turns do not random-walk while a gap of
    a day gets about the seed's full sigma."""
    f = decay_factor(hours, cfg)
    t = cfg.temperament
    out = [s * f + b * (1 - f) for s, b in ((state.valence, t.valence),
                                            (state.energy, t.energy),
                                            (state.openness, t.openness))]
    if rng is not None and cfg.noise_sigma > 0:
        sigma = cfg.noise_sigma * math.sqrt(1 - f)
        out = [x + rng.gauss(0.0, sigma) for x in out]
    return EmotionState(*out).clipped()


def apply_signal(state: EmotionState, signal: Signal, cfg: EmotionConfig) -> EmotionState:
    """One step (cfg.step) along the turn's signal; an empty signal leaves it as is."""
    return EmotionState(state.valence + cfg.step * signal.valence,
                        state.energy + cfg.step * signal.energy,
                        state.openness + cfg.step * signal.openness).clipped()


# -- the lexicon heuristic (a named heuristic, not a model) ---------------------------

# word or phrase -> (valence, energy, openness) cue; cogd choice, a small English list
LEXICON: dict[str, tuple[float, float, float]] = {
    # negative, high energy
    "frustrated": (-1.0, 0.5, -0.3), "frustrating": (-1.0, 0.5, -0.3),
    "annoyed": (-0.8, 0.4, -0.3), "annoying": (-0.7, 0.4, -0.2),
    "angry": (-1.0, 0.7, -0.4), "furious": (-1.0, 0.9, -0.5), "hate": (-0.9, 0.5, -0.3),
    "broken": (-0.7, 0.3, -0.1), "fails": (-0.5, 0.2, 0.0), "failed": (-0.6, 0.2, 0.0),
    "failing": (-0.6, 0.3, 0.0), "crash": (-0.5, 0.4, 0.0), "crashes": (-0.5, 0.4, 0.0),
    "bug": (-0.3, 0.2, 0.0), "ugh": (-0.7, 0.3, -0.2), "stupid": (-0.7, 0.4, -0.3),
    "worried": (-0.6, 0.5, 0.1), "anxious": (-0.7, 0.6, 0.1), "stressed": (-0.7, 0.6, 0.0),
    "overwhelmed": (-0.8, 0.6, 0.2), "terrible": (-0.9, 0.3, -0.1), "awful": (-0.9, 0.3, -0.1),
    "wrong": (-0.4, 0.1, 0.0), "bad": (-0.6, 0.1, 0.0), "worse": (-0.6, 0.2, 0.0),
    # negative, low energy
    "sad": (-0.8, -0.5, 0.2), "tired": (-0.4, -0.9, 0.0), "exhausted": (-0.6, -1.0, 0.0),
    "bored": (-0.4, -0.7, -0.2), "lonely": (-0.7, -0.4, 0.3), "disappointed": (-0.7, -0.3, 0.0),
    "drained": (-0.6, -0.9, -0.1), "sleepy": (-0.1, -0.8, 0.0), "hopeless": (-0.9, -0.6, 0.0),
    "give up": (-0.7, -0.5, -0.2),
    # positive, high energy
    "great": (0.8, 0.4, 0.1), "awesome": (0.9, 0.6, 0.2), "amazing": (0.9, 0.6, 0.2),
    "excited": (0.8, 0.9, 0.3), "exciting": (0.7, 0.8, 0.2), "love": (0.9, 0.4, 0.5),
    "wow": (0.6, 0.7, 0.2), "fantastic": (0.9, 0.6, 0.2), "works": (0.5, 0.2, 0.0),
    "fixed": (0.6, 0.3, 0.0), "finally": (0.3, 0.4, 0.0), "proud": (0.8, 0.5, 0.2),
    "fun": (0.7, 0.5, 0.2),
    # positive, low energy
    "thanks": (0.6, 0.0, 0.2), "thank you": (0.7, 0.0, 0.3), "good": (0.5, 0.1, 0.0),
    "nice": (0.5, 0.1, 0.1), "happy": (0.8, 0.3, 0.2), "glad": (0.7, 0.1, 0.2),
    "calm": (0.4, -0.6, 0.2), "relaxed": (0.6, -0.6, 0.2), "relieved": (0.6, -0.4, 0.2),
    # "content" only as a feeling: alone it is mostly the noun ("the page content")
    "i'm content": (0.6, -0.4, 0.1), "am content": (0.6, -0.4, 0.1),
    "feel content": (0.6, -0.4, 0.1),
    "helpful": (0.6, 0.1, 0.1), "perfect": (0.8, 0.2, 0.1),
    # energy without valence
    "urgent": (-0.1, 0.8, 0.0), "asap": (-0.1, 0.8, 0.0), "quickly": (0.0, 0.5, 0.0),
    "hurry": (-0.1, 0.8, 0.0), "slowly": (0.0, -0.4, 0.0),
    # openness: open
    "honestly i feel": (0.0, 0.0, 1.0), "i feel": (0.0, 0.0, 0.6), "to be honest": (0.0, 0.0, 0.7),
    "honestly": (0.0, 0.0, 0.4), "i'm scared": (-0.6, 0.3, 0.9), "personally": (0.0, 0.0, 0.3),
    "confess": (0.0, 0.1, 0.8), "afraid": (-0.6, 0.3, 0.5),
    # openness: guarded
    "whatever": (-0.3, -0.2, -0.8), "never mind": (-0.2, -0.2, -0.7),
    "nevermind": (-0.2, -0.2, -0.7),
    "fine": (0.1, -0.1, -0.3), "just do it": (-0.2, 0.3, -0.7), "none of your business":
    (-0.5, 0.3, -1.0), "leave it": (-0.2, -0.1, -0.6),
}
NEGATORS = frozenset({"not", "never", "hardly", "barely", "isn't", "wasn't", "aren't",
                      "don't", "doesn't", "didn't", "can't", "cannot", "won't", "without",
                      "isnt", "dont", "doesnt", "didnt", "cant", "wont", "nothing"})
NEGATION_WINDOW = 3  # cogd choice: a negator up to 3 words before a cue flips it
NEGATED_SCALE = 0.5  # cogd choice: "not bad" is milder than "good"
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|[.,;:!?]")
_BREAKS = frozenset(".,;:!?")
_PHRASES = sorted((k for k in LEXICON if " " in k), key=lambda k: -len(k.split()))


def lexicon_signal(text: str) -> Signal:
    """The lexicon heuristic: each cue word or phrase adds its (valence, energy,
    openness); a negator up to NEGATION_WINDOW words before a cue flips its valence (and
    halves it: "not bad"); "!" and shouted words add energy. Each axis is clipped to
    [-1, 1]. A named heuristic, not a model."""
    words = _TOKEN.findall(text.lower().replace("\u2019", "'"))
    dv = de = do = 0.0
    cues: list[str] = []
    used = [False] * len(words)
    spans: list[tuple[int, int, str]] = []
    for phrase in _PHRASES:  # longest first; a word belongs to one cue
        parts = phrase.split()
        n = len(parts)
        for i in range(len(words) - n + 1):
            if words[i:i + n] == parts and not any(used[i:i + n]):
                spans.append((i, n, phrase))
                for j in range(i, i + n):
                    used[j] = True
    for i, w in enumerate(words):
        if not used[i] and w in LEXICON:
            spans.append((i, 1, w))
            used[i] = True
    for i, _n, cue in sorted(spans):
        v, e, o = LEXICON[cue]
        negated = False
        for j in range(i - 1, max(-1, i - 1 - NEGATION_WINDOW), -1):
            if words[j] in _BREAKS or used[j]:  # a negator reaches its next cue only,
                break  # within its clause: in "not bad, thanks" the thanks is plain
            if words[j] in NEGATORS:
                negated = True
                break
        if negated:
            v, e, o = -v * NEGATED_SCALE, e * NEGATED_SCALE, o * NEGATED_SCALE
            cue = f"not {cue}"
        dv, de, do = dv + v, de + e, do + o
        cues.append(cue)
    bangs = min(3, text.count("!"))
    shouted = sum(1 for w in re.findall(r"\b[A-Z]{3,}\b", text))
    if bangs or shouted:
        de += 0.2 * bangs + 0.3 * min(2, shouted)
        cues.append("emphasis")
    return Signal(_clip(dv, -1.0, 1.0), _clip(de, -1.0, 1.0), _clip(do, -1.0, 1.0),
                  tuple(cues))


# -- discrete emotions (seed 000 §3.2) ------------------------------------------------

# name -> (valence, energy, openness, region): the seed's six regions and their examples;
# cogd choice: the coordinates (the seed gives none), and a "balanced" region for the
# states near the temperament
EMOTIONS: dict[str, tuple[float, float, float, str]] = {
    "excited": (0.8, 0.9, 0.7, "positive-high"), "proud": (0.75, 0.7, 0.55, "positive-high"),
    "amused": (0.7, 0.7, 0.65, "positive-high"), "energized": (0.65, 0.85, 0.55, "positive-high"),
    "playful": (0.7, 0.75, 0.75, "positive-high"),
    "content": (0.6, 0.3, 0.6, "positive-low"), "peaceful": (0.55, 0.15, 0.65, "positive-low"),
    "tender": (0.6, 0.3, 0.85, "positive-low"), "relieved": (0.5, 0.3, 0.55, "positive-low"),
    "satisfied": (0.65, 0.4, 0.5, "positive-low"),
    "frustrated": (-0.6, 0.75, 0.3, "negative-high"), "anxious": (-0.5, 0.8, 0.45, "negative-high"),
    "irritated": (-0.5, 0.7, 0.2, "negative-high"), "restless": (-0.25, 0.8, 0.45, "negative-high"),
    "overwhelmed": (-0.65, 0.9, 0.55, "negative-high"),
    "sad": (-0.65, 0.25, 0.5, "negative-low"), "tired": (-0.2, 0.1, 0.45, "negative-low"),
    "withdrawn": (-0.35, 0.2, 0.15, "negative-low"),
    "discouraged": (-0.5, 0.3, 0.35, "negative-low"),
    "drained": (-0.4, 0.1, 0.3, "negative-low"),
    "focused": (0.15, 0.7, 0.35, "neutral-high"), "curious": (0.3, 0.65, 0.75, "neutral-high"),
    "alert": (0.05, 0.75, 0.45, "neutral-high"), "anticipating": (0.25, 0.7, 0.55, "neutral-high"),
    "determined": (0.2, 0.85, 0.4, "neutral-high"),
    "vulnerable": (-0.1, 0.4, 0.95, "open"), "warm": (0.65, 0.5, 0.85, "open"),
    "intimate": (0.5, 0.4, 0.95, "open"), "raw": (-0.3, 0.6, 0.95, "open"),
    "present": (0.35, 0.45, 0.85, "open"),
    "steady": (0.5, 0.5, 0.6, "balanced"), "calm": (0.35, 0.3, 0.5, "balanced"),
    "neutral": (0.0, 0.45, 0.45, "balanced"), "guarded": (0.0, 0.45, 0.1, "balanced"),
}


def distance(a: EmotionState, b: EmotionState, cfg: EmotionConfig) -> float:
    """Seed 000 §3.2: √(wv·Δv² + we·Δe² + wo·Δo²)."""
    return math.sqrt(cfg.weight_valence * (a.valence - b.valence) ** 2
                     + cfg.weight_energy * (a.energy - b.energy) ** 2
                     + cfg.weight_openness * (a.openness - b.openness) ** 2)


def resolve(state: EmotionState, cfg: EmotionConfig, n: int = 3) -> list[tuple[str, float]]:
    """The `n` nearest discrete emotions, nearest first, each with an intensity in (0, 1]
    (1 / (1 + distance)); ties by name."""
    scored = sorted((distance(state, EmotionState(v, e, o), cfg), name)
                    for name, (v, e, o, _r) in EMOTIONS.items())
    return [(name, round(1 / (1 + d), 4)) for d, name in scored[:n]]


def label(state: EmotionState, cfg: EmotionConfig) -> str:
    return resolve(state, cfg, 1)[0][0]


def region(name: str) -> str | None:
    found = EMOTIONS.get(name)
    return found[3] if found else None


def render(state: EmotionState, cfg: EmotionConfig) -> str:
    """The prompt's tendency line: the nearest emotion, qualified by how far the state is
    from the temperament (near the baseline / mildly / strongly), with the coordinates."""
    name = label(state, cfg)
    d = distance(state, cfg.temperament, cfg)
    feel = (f"{name}, near your usual baseline" if d < cfg.baseline_below
            else f"strongly {name}" if d > cfg.strong_above else f"mildly {name}")
    return (f"You feel {feel} (valence {state.valence:+.2f}, energy {state.energy:.2f}, "
            f"openness {state.openness:.2f}); let it colour your tone, not your facts.")


# -- mood-congruent recall (seed 000 §4.2) -------------------------------------------

def resonance(encoded: EmotionState, current: EmotionState, cfg: EmotionConfig,
              importance: float = 0.0) -> float:
    """Seed 000 §4.2: valence_match·0.45 + energy_match·0.20 + openness_match·0.10 +
    importance·0.10 + emotion_bonus (0.15 same emotion, 0.08 same region), each match
    1 - |Δ|. At most 1.0 (0.85 + the full bonus); a valence match is negative for
    opposite feelings (Δv > 1)."""
    a, b = label(encoded, cfg), label(current, cfg)
    bonus = (cfg.bonus_same_emotion if a == b
             else cfg.bonus_same_region if region(a) == region(b) else 0.0)
    return (cfg.resonance_valence * (1 - abs(encoded.valence - current.valence))
            + cfg.resonance_energy * (1 - abs(encoded.energy - current.energy))
            + cfg.resonance_openness * (1 - abs(encoded.openness - current.openness))
            + cfg.resonance_importance * _clip(importance, 0.0, 1.0) + bonus)


@dataclass(frozen=True)
class MoodCue:
    """The current state as recall's mood-congruence cue (none: recall is unchanged)."""

    state: EmotionState
    cfg: EmotionConfig


def mood_term(imprint: EmotionState | None, cue: MoodCue | None) -> float:
    """The mood-congruence adjustment in [-mood_max_boost, +mood_max_boost]: 0 exactly
    without a cue or an imprint. cogd choice: the seed's resonance without importance
    (recall weighs importance already) mapped linearly from its range [-wv, wv + we + wo +
    same-emotion bonus] onto [-1, 1]: an identical feeling gets the full boost, the
    opposite one the full penalty."""
    if imprint is None or cue is None or cue.cfg.mood_max_boost == 0:
        return 0.0
    c = cue.cfg
    r = resonance(imprint, cue.state, c)
    lo = -c.resonance_valence
    hi = c.resonance_valence + c.resonance_energy + c.resonance_openness + c.bonus_same_emotion
    if hi <= lo:
        return 0.0
    unit = _clip(2 * (r - lo) / (hi - lo) - 1, -1.0, 1.0)
    return c.mood_max_boost * unit


# -- the LLM judgement's prompt and answer ---------------------------------------------

JUDGE_SYSTEM = (
    "You judge the emotional signal of one message a user wrote. Answer with JSON only: "
    '{"valence": v, "energy": e, "openness": o}, each a number from -1 to 1: valence '
    "-1 very negative .. 1 very positive; energy -1 calming/tired .. 1 agitated/excited; "
    "openness -1 guarded/curt .. 1 confiding/vulnerable; 0 when the message shows "
    "nothing on that axis (most factual messages are 0, 0, 0)."
)


def judge_messages(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": JUDGE_SYSTEM},
            {"role": "user", "content": text[:2000]}]


def parse_judgement(value: Any) -> Signal | None:
    """The LLM's JSON object as a signal; None when it is not one."""
    if not isinstance(value, Mapping):
        return None
    out: list[float] = []
    for key in ("valence", "energy", "openness"):
        x = value.get(key)
        if isinstance(x, bool) or not isinstance(x, int | float) or x != x:
            return None
        out.append(_clip(float(x), -1.0, 1.0))
    return Signal(out[0], out[1], out[2], cues=("llm",))

