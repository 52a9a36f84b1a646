"""The emotional state's database side (seed 000 §3): one `emotional_state` row per user
turn, read back decayed toward the temperament.

Per user turn: the latest row → decayed to the turn's time → one step along the turn's
signal (the LLM of role `emotion` when it routes to a real model, else the named
lexicon heuristic of agent/domain/emotion.py) → a new row (at most one per turn: a
replayed turn inserts nothing and reads the row it wrote before).
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import emotion as rules
from agent.domain.llm_json import parse_llm_json
from agent.errors import ProviderError
from agent.providers.ports import LLM

logger = logging.getLogger(__name__)

# providers whose judgement is asked; the bundled 135M model and the extractive
# `heuristic` profile cannot judge affect usefully (as recall's REWRITE_PROVIDERS)
JUDGE_PROVIDERS = ("openai", "gemini")


@dataclass(frozen=True)
class Mood:
    """A user's state as read: the point, its nearest emotion, who moved it last and
    when (None: no row yet, the temperament)."""

    state: rules.EmotionState
    label: str
    detector: str | None
    changed_at: datetime | None

    def as_dict(self) -> dict[str, Any]:
        return {**self.state.as_dict(), "label": self.label, "detector": self.detector}


def _hours(since: datetime, now: datetime) -> float:
    return max(0.0, (now - since).total_seconds() / 3600.0)


def _row_state(row: Any) -> rules.EmotionState:
    return rules.EmotionState(float(row[0]), float(row[1]), float(row[2]))


def current(conn: psycopg.Connection[Any], user_id: Any, now: datetime,
            cfg: rules.EmotionConfig) -> Mood:
    """The user's state at `now`: the latest row decayed by the time since (no noise: a
    read changes nothing); the temperament when there is no row."""
    row = conn.execute(query("emotion_latest"), {"user_id": user_id}).fetchone()
    if row is None:
        state = cfg.temperament
        return Mood(state, rules.label(state, cfg), None, None)
    state = rules.decay(_row_state(row), _hours(row[5], now), cfg)
    return Mood(state, rules.label(state, cfg), row[4], row[5])


def signal_of(text: str, judge: LLM | None) -> tuple[rules.Signal, str]:
    """The turn's signal and its detector: the LLM's judgement when one is configured and
    answers with the JSON asked for, else the lexicon heuristic (named)."""
    if judge is not None:
        try:
            out = judge.chat(rules.judge_messages(text), temperature=0.0, max_tokens=60)
        except ProviderError as exc:
            logger.warning("emotion judgement failed (%s); lexicon heuristic instead", exc)
        else:
            parsed = parse_llm_json(out.text, dict)
            signal = rules.parse_judgement(parsed.value) if parsed.ok else None
            if signal is not None and not out.fallback:
                return signal, f"llm:{out.provider}/{out.model}"
    return rules.lexicon_signal(text), rules.LEXICON_DETECTOR


def update(conn: psycopg.Connection[Any], user_id: Any, entry_id: Any, text: str,
           now: datetime, cfg: rules.EmotionConfig, *, judge: LLM | None = None,
           rng: random.Random | None = None,
           frustration: dict[str, Any] | None = None) -> Mood:
    """The state after the user turn `entry_id` (its text `text`, written at `now`):
    decayed from the latest row, moved by the turn's signal, stored. A turn already
    recorded (a replay) is not judged again: its row is returned. `frustration`: the
    turn's frustration signals (agent/services/conversation/frustration.py), stored in the
    row's `signals.frustration`."""
    done = conn.execute(query("emotion_of_entry"), {"entry_id": entry_id}).fetchone()
    if done is not None:
        state = _row_state(done)
        return Mood(state, done[3] or rules.label(state, cfg), done[4], done[5])
    latest = conn.execute(query("emotion_latest"), {"user_id": user_id}).fetchone()
    start = (cfg.temperament if latest is None
             else rules.decay(_row_state(latest), _hours(latest[5], now), cfg, rng))
    signal, detector = signal_of(text, judge)
    state = rules.apply_signal(start, signal, cfg)
    name = rules.label(state, cfg)
    signals = {**signal.as_dict(), "from": start.as_dict(),
               "nearest": rules.resolve(state, cfg)}
    if frustration is not None:
        signals["frustration"] = frustration
    with conn.transaction():
        conn.execute(query("emotion_insert"), {
            "user_id": user_id, "entry_id": entry_id, "valence": state.valence,
            "energy": state.energy, "openness": state.openness, "label": name,
            "detector": detector, "signals": json.dumps(signals), "created_at": now})
    return Mood(state, name, detector, now)


def mood_text(conn: psycopg.Connection[Any], user_id: Any, now: datetime,
              cfg: rules.EmotionConfig) -> str:
    """`/mood`: the user's state now, its nearest emotions, and when and by what it last
    changed (the `v_emotion` view shows the same per user)."""
    mood = current(conn, user_id, now, cfg)
    s, t = mood.state, cfg.temperament
    nearest = ", ".join(f"{name} {w:.2f}" for name, w in rules.resolve(s, cfg))
    lines = [f"mood: {mood.label} (valence {s.valence:+.2f}, energy {s.energy:.2f}, "
             f"openness {s.openness:.2f}); nearest: {nearest}"]
    if mood.changed_at is None:
        lines.append("no turn has moved it yet: this is the temperament")
    else:
        minutes = int(max(0.0, (now - mood.changed_at).total_seconds()) // 60)
        lines.append(f"last changed {mood.changed_at:%Y-%m-%d %H:%M %Z} ({minutes} min ago) "
                     f"by {mood.detector}; decayed since toward the temperament")
    lines.append(f"temperament: valence {t.valence:+.2f}, energy {t.energy:.2f}, "
                 f"openness {t.openness:.2f}; decay e^(-{cfg.decay_per_hour} x hours)")
    return "\n".join(lines)
