"""Frustration signals of one user turn, read from its session (seed 000 §5.4.6): the
frustration heuristic of agent/domain/frustration.py over the turn and the session's user
turns before it (their words and universal vectors, from day_table).

Deterministic: the loop (prepare_turn, which stores the result in the turn's
emotional_state row under `signals.frustration`) and the idle DMN (which holds its
proactive thoughts back on a frustrated turn) judge a turn alike, whichever runs first.
`cogd hook` judges a prompt before it is a turn (`of_prompt`) by the same rules.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg

from agent.db.queries import query
from agent.domain import frustration as rules


def _vectors(rows: list[tuple[Any, ...]]) -> list[Any]:
    return [None if r[1] is None else np.asarray(json.loads(r[1]), dtype=np.float32)
            for r in rows]


def _sims(vecs: list[Any], i: int, window: int) -> list[float]:
    """Cosine of turn i to the (up to `window`) turns after it in the newest-first list."""
    if vecs[i] is None:
        return []
    out = []
    for v in vecs[i + 1: i + 1 + window]:
        if v is not None:
            denom = float(np.linalg.norm(vecs[i]) * np.linalg.norm(v)) or 1.0
            out.append(float(vecs[i] @ v) / denom)
    return out


def of_turn(conn: psycopg.Connection[Any], entry_id: Any,
            cfg: rules.FrustrationConfig) -> rules.Frustration:
    """The frustration of user turn `entry_id` (CALM when it is not a user turn)."""
    window = cfg.frustration_window_turns
    rows = conn.execute(query("frustration_session_user_turns"),
                        {"entry_id": entry_id, "n": 2 * window + 1}).fetchall()
    if not rows:
        return rules.CALM
    return _judge([r[0] for r in rows], _vectors(rows), cfg)


def _judge(texts: list[str], vecs: list[Any], cfg: rules.FrustrationConfig
           ) -> rules.Frustration:
    """The first text's frustration, the rest its session's earlier user turns (newest
    first), `vecs` their universal vectors (None: no rephrase cue for that one)."""
    window = cfg.frustration_window_turns
    cues = [rules.turn_cues(t, _sims(vecs, i, window), cfg)
            for i, t in enumerate(texts[: window + 1])]
    return rules.assess(cues[0], cues[1:], cfg)



def of_prompt(conn: psycopg.Connection[Any], session_id: Any, text: str,
              embed: Callable[[str], Any], cfg: rules.FrustrationConfig) -> rules.Frustration:
    """The frustration of a prompt not stored as a turn (`cogd hook`), against its session's
    user turns; `embed`: the prompt's universal document vector, asked for only when the
    session has an earlier user turn to compare it with (the rephrase cue). The prompt
    itself, when `cogd watch` already imported it, is not read as its own earlier turn."""
    window = cfg.frustration_window_turns
    rows = conn.execute(query("frustration_prompt_window"),
                        {"session": session_id, "n": 2 * window + 1}).fetchall()
    if rows and rows[0][0].strip() == text.strip():
        rows = rows[1:]
    rows = rows[: 2 * window]
    vector = np.asarray(embed(text), dtype=np.float32) if rows else None
    return _judge([text, *(r[0] for r in rows)], [vector, *_vectors(rows)], cfg)
