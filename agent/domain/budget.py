"""A block of prompt lines cut to a token budget (pure): the handoff and the profile."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def fit_lines(head: Sequence[str], items: Sequence[tuple[str, T]], max_tokens: int,
              count_tokens: Callable[[str], int], budget: str) -> tuple[str, list[T]]:
    """`head`, then each item's line while the block fits `max_tokens`: the block and the
    items kept. The first line that does not fit ends it, with a "cut to the <budget>
    budget" line when that line fits."""
    lines = list(head)
    kept: list[T] = []
    for line, item in items:
        if count_tokens("\n".join([*lines, line])) > max_tokens:
            cut = f"- … (cut to the {budget} budget)"
            if count_tokens("\n".join([*lines, cut])) <= max_tokens:
                lines.append(cut)
            break
        lines.append(line)
        kept.append(item)
    return "\n".join(lines), kept
