"""Frustration signals in a user's messages (seed 000 §5.4.6): pure rules.

The **frustration heuristic** (`FRUSTRATION_DETECTOR`, named wherever it is stored): no
model, a few English patterns and the session's own earlier user turns. Cues of one
message, each with a fixed weight (cogd choice):

- `correction`: "but you didn't", "you forgot", "that's not what I asked", "still wrong",
  "you missed", "wrong again" (seed 000 §5.4.6's examples and their kin);
- `already_told`: "I already told you", "I told you", "as I said", "like I said";
- `short_negative`: a reply of at most `SHORT_WORDS` words that starts with no, nope,
  wrong, incorrect or "that's wrong / not right";
- `caps`: at least `CAPS_MIN_LETTERS` letters, `CAPS_MIN_FRACTION` of them upper case;
- `exclamation`: "!!", "?!" or three "!" in one message;
- `rephrase`: the message is at least `rephrase_min_similarity` similar (cosine of the
  universal vectors) to one of the session's last `window_turns` user turns: the same
  question asked again.

The score is the sum of the message's cue weights plus `STREAK_WEIGHT` for each of the
immediately preceding user turns (at most `window_turns`) that carried a correction,
already-told, short-negative or rephrase cue ("corrections in a row"), capped at 1. At
`frustrated_min_score` or above the turn is frustrated: the reply is asked to be brief
and to acknowledge, and the idle DMN holds its proactive thoughts back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.domain.tables import scalar_fields

FRUSTRATION_DETECTOR = "frustration-heuristic"

# cue -> weight (cogd choice: one strong cue, or two weak ones, in a row of two reaches 0.6)
WEIGHTS: Mapping[str, float] = {
    "correction": 0.5, "already_told": 0.6, "short_negative": 0.4, "rephrase": 0.5,
    "caps": 0.3, "exclamation": 0.2,
}
# the cues that say "that was wrong": a run of them is "corrections in a row"
CORRECTING = ("correction", "already_told", "short_negative", "rephrase")
STREAK_WEIGHT = 0.25  # cogd choice: each correcting turn just before this one
SHORT_WORDS = 6  # cogd choice: "no, that's wrong" and its kin are short
CAPS_MIN_LETTERS = 8  # cogd choice: "OK" or "USA" is not shouting
CAPS_MIN_FRACTION = 0.7  # cogd choice

_CORRECTION = re.compile(
    r"\b(but you (didn'?t|did not|never|forgot)|you (forgot|missed|ignored|keep)|"
    r"that'?s not what i (asked|said|meant|wanted)|not what i (asked|meant|wanted)|"
    r"(still|again) (wrong|broken|not working)|wrong again|you got it wrong|"
    r"i (said|asked for) .{0,40}\bnot\b)", re.I)
_ALREADY = re.compile(
    r"\b(i (already|just) (told|said|asked|explained)|i told you|as i (said|told you)|"
    r"like i (said|told you)|how many times)\b", re.I)
_SHORT_NEGATIVE = re.compile(
    r"^\s*(no+\b|nope\b|wrong\b|incorrect\b|not (right|correct|that)\b|"
    r"that'?s (wrong|not (right|it|correct)))", re.I)
_EXCLAIM = re.compile(r"!!|\?!|!\?|(!.*){3}")


@dataclass(frozen=True)
class FrustrationConfig:
    """[emotion] frustration_* keys."""

    frustration_min_score: float
    frustration_rephrase_min_similarity: float
    frustration_window_turns: int

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> FrustrationConfig:
        return cls(**scalar_fields(cls, t))


@dataclass(frozen=True)
class Frustration:
    """One user turn's frustration: its score in [0, 1], whether it passes the threshold,
    the cues that fired (with `streak`, the correcting turns just before it)."""

    score: float
    frustrated: bool
    cues: tuple[str, ...] = ()
    streak: int = 0
    detector: str = FRUSTRATION_DETECTOR
    extra: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"score": round(self.score, 3), "frustrated": self.frustrated,
                "cues": list(self.cues), "streak": self.streak, "detector": self.detector,
                **self.extra}


CALM = Frustration(0.0, False)


def text_cues(text: str) -> list[str]:
    """The cues one message's words carry (everything but `rephrase`)."""
    cues: list[str] = []
    if _CORRECTION.search(text):
        cues.append("correction")
    if _ALREADY.search(text):
        cues.append("already_told")
    if len(text.split()) <= SHORT_WORDS and _SHORT_NEGATIVE.search(text):
        cues.append("short_negative")
    letters = [c for c in text if c.isalpha()]
    if (len(letters) >= CAPS_MIN_LETTERS
            and sum(c.isupper() for c in letters) / len(letters) >= CAPS_MIN_FRACTION):
        cues.append("caps")
    if _EXCLAIM.search(text):
        cues.append("exclamation")
    return cues


def turn_cues(text: str, similarities: Sequence[float], cfg: FrustrationConfig) -> list[str]:
    """A message's cues; `similarities`: its cosine to each of the session's earlier user
    turns in the window (newest first)."""
    cues = text_cues(text)
    if any(s >= cfg.frustration_rephrase_min_similarity for s in similarities):
        cues.append("rephrase")
    return cues


def assess(cues: Sequence[str], earlier: Sequence[Sequence[str]],
           cfg: FrustrationConfig) -> Frustration:
    """The turn's frustration from its cues and the cues of the session's earlier user
    turns (newest first, at most `frustration_window_turns` are read)."""
    streak = 0
    for before in earlier[: cfg.frustration_window_turns]:
        if not any(c in CORRECTING for c in before):
            break
        streak += 1
    score = min(1.0, sum(WEIGHTS[c] for c in cues) + (STREAK_WEIGHT * streak if cues else 0.0))
    return Frustration(score, score >= cfg.frustration_min_score, tuple(cues), streak)


def instruction(f: Frustration) -> str:
    """What the reply is asked to do on a frustrated turn (cogd's own instruction)."""
    said = ", ".join(c.replace("_", " ") for c in f.cues) or "signs of frustration"
    return (f"The user seems frustrated ({FRUSTRATION_DETECTOR}: {said}). Be brief: "
            "acknowledge plainly what went wrong or what they already said, then answer "
            "exactly what they asked. No asides, no new suggestions, no recalled "
            "digressions.")


def hook_line(f: Frustration) -> str:
    """What `cogd hook` shows of a frustrated prompt: information for the assistant, not an
    instruction (the hook's block is quoted data)."""
    said = ", ".join(c.replace("_", " ") for c in f.cues) or "signs of frustration"
    row = f"; {f.streak} correcting message(s) just before it" if f.streak else ""
    return (f"This prompt reads as frustrated ({FRUSTRATION_DETECTOR}: {said}{row}). "
            "Nothing unasked-for is recalled for it.")
