"""The rolling context window and the compound recall query (issue #4 steps 2-3).

Pure functions over plain values: the loop reads turns from day_table and asks
these which turns are still in the window, which rolled out, and what to search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class WindowTurn:
    entry_id: Any
    role: str
    content: str
    tokens: int


def split_window(
    newest_first: Sequence[WindowTurn], budget_tokens: int
) -> tuple[list[WindowTurn], list[WindowTurn]]:
    """(inside, rolled_out): the newest turns that fit the budget, and the rest.

    The newest turn is always inside, even when it alone exceeds the budget (a
    1 MB paste is still answered; the provider adapter truncates what it sends).
    """
    inside: list[WindowTurn] = []
    used = 0
    for i, turn in enumerate(newest_first):
        if i > 0 and used + turn.tokens > budget_tokens:
            return list(reversed(inside)), list(newest_first[i:])
        inside.append(turn)
        used += turn.tokens
    return list(reversed(inside)), []


def window_fraction(turns: Sequence[WindowTurn], budget_tokens: int) -> float:
    """How much of the window the turns use (0..1+)."""
    return sum(t.tokens for t in turns) / max(1, budget_tokens)


def compound_query(
    prompt: str,
    last_user_messages: Sequence[str],
    frame: str = "",
    max_messages: int = 3,
    max_chars: int = 2000,
) -> str:
    """Context frame + the last `max_messages` user messages + the prompt (seed 000 §5.4.3).

    The prompt comes first so truncation never cuts it; earlier messages add
    context for pronouns and follow-ups ("and what about her sister?").
    """
    parts = [prompt.strip()]
    for msg in list(last_user_messages)[-max_messages:][::-1]:
        msg = msg.strip()
        if msg and msg not in parts:
            parts.append(msg)
    if frame.strip():
        parts.append(frame.strip())
    return "\n".join(parts)[:max_chars]
