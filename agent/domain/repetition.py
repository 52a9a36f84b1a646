"""The repetition guard: where a model's reply starts looping (pure).

A small model (the bundled SmolLM2-135M) falls into loops: one sentence again and again
until max_tokens (issue 40). The guard finds the first word at which some run of
`n` words occurs for the `count`-th time, so the reply can be cut there: what is kept
holds every `n`-word run at most `count - 1` times. Words are compared lower-cased,
without punctuation. The bench (bench/suites/factchat.py) counts looping replies with the same
function, so the guard and the measure agree.
"""

from __future__ import annotations

import re

WORD = re.compile(r"\w+(?:['\u2019]\w+)*")  # an apostrophe, straight or curly
GUARD_NGRAM = 5  # issue 40: no 5-word sequence ...
GUARD_COUNT = 3  # ... 3 or more times


def loop_start(text: str, n: int = GUARD_NGRAM, count: int = GUARD_COUNT) -> int | None:
    """The character offset of the word where an `n`-word run occurs for the `count`-th
    time (the start of that occurrence), or None when no run repeats that often."""
    if n < 1 or count < 2:
        raise ValueError(f"loop_start needs n >= 1 and count >= 2 (got n={n}, count={count})")
    words = [(m.start(), m.group().lower()) for m in WORD.finditer(text)]
    seen: dict[tuple[str, ...], int] = {}
    for i in range(len(words) - n + 1):
        gram = tuple(w for _, w in words[i:i + n])
        seen[gram] = seen.get(gram, 0) + 1
        if seen[gram] >= count:
            return words[i][0]
    return None


def cut_loop(text: str, n: int = GUARD_NGRAM, count: int = GUARD_COUNT) -> tuple[str, bool]:
    """`text` cut before the occurrence that makes it loop (trailing space and a dangling
    comma or dash dropped), and whether it was cut."""
    at = loop_start(text, n, count)
    if at is None:
        return text, False
    return text[:at].rstrip().rstrip(",;:-\u2013\u2014").rstrip(), True


def loops(text: str, n: int = GUARD_NGRAM, count: int = GUARD_COUNT) -> bool:
    """Whether some `n`-word run occurs `count` or more times in `text`."""
    return loop_start(text, n, count) is not None


def settled(text: str, n: int = GUARD_NGRAM) -> int:
    """How much of a reply still being written can be shown: everything before its last
    `n - 1` words, which may yet begin a looping run (a stream shows that much, and the
    rest once the guard has judged it)."""
    starts = [m.start() for m in WORD.finditer(text)]
    return starts[-(n - 1)] if n > 1 and len(starts) >= n - 1 else (len(text) if n <= 1 else 0)
