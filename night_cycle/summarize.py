"""Summaries for dead zones and cluster nodes: the night_cycle LLM role, or the extractive
fallback (the heuristic profile, or when the LLM fails), named as such in its output."""

from __future__ import annotations

import logging
import re
from collections import Counter

from agent.errors import CogdError
from agent.providers.heuristic import FALLBACK_PREFIX, extract
from agent.providers.ports import LLM

logger = logging.getLogger(__name__)
EXTRACTIVE = "extractive fallback (heuristic)"
_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)
_SPEAKER = re.compile(r"^(user|assistant|system): ", re.MULTILINE)
SYSTEM = ("You write short summaries of conversation excerpts for a memory archive: one or "
          "two plain sentences saying what was discussed or decided. No preamble.")
_SENT = re.compile(r"(?<=[.!?])\s+")
_ECHO = re.compile(r"^(excerpt|summary|one-sentence summary[^:]*|user|assistant)\s*:\s*",
                   re.IGNORECASE)


def key_terms(text: str, n: int = 8) -> str:
    counts = Counter(w.lower() for w in _WORD.findall(text))
    return " ".join(w for w, _ in counts.most_common(n))


def extractive(text: str, max_chars: int) -> str:
    """The most central sentences (by shared key terms), prefixed as a fallback."""
    text = _SPEAKER.sub("", strip_fallback(text))
    picked = extract(key_terms(text), text, max_sentences=2, max_chars=max_chars)
    return FALLBACK_PREFIX + (picked or " ".join(text.split())[:max_chars])


class Summarizer:
    def __init__(self, llm: LLM | None, max_tokens: int, max_input_chars: int,
                 unavailable: str | None = None) -> None:
        """`llm` None: the role's model could not be built (`unavailable` says why)."""
        self.llm = llm
        self.max_tokens = max_tokens
        self.max_input_chars = max_input_chars
        self.heuristic = llm is None or llm.provider == "heuristic"
        self.fallback_name = (EXTRACTIVE if unavailable is None
                              else f"{EXTRACTIVE}; night_cycle LLM unavailable: {unavailable}")
        self.name = (self.fallback_name if llm is None or self.heuristic
                     else f"llm:{llm.provider}:{llm.model}")
        self.failures = 0

    def __call__(self, text: str) -> tuple[str, str]:
        """(summary, summarizer name)."""
        text = text[: self.max_input_chars]
        limit = self.max_tokens * 4
        if self.heuristic or self.llm is None:
            return extractive(text, limit), self.fallback_name
        try:
            result = self.llm.chat(
                [{"role": "system", "content": SYSTEM},
                 {"role": "user", "content": f"{text}\n\nSummary of the conversation above:"}],
                temperature=0.2, max_tokens=self.max_tokens,
            )
            out = usable(result.text, text)
            if out:
                return out, self.name
            self.failures += 1
            return extractive(text, limit), f"{EXTRACTIVE}; the LLM's summary was unusable"
        except (CogdError, RuntimeError, ValueError) as exc:  # keep going; name the fallback
            self.failures += 1
            logger.warning("night-cycle summary fell back to extraction: %s", exc)
        return extractive(text, limit), f"{EXTRACTIVE}; the LLM failed"


def usable(summary: str, source: str) -> str | None:
    """The LLM's summary without echoed labels and repeated sentences; None when what is
    left is empty or no shorter than its source (small models loop and echo)."""
    seen: list[str] = []
    for sentence in _SENT.split(" ".join(summary.split())):
        while (bare := _ECHO.sub("", sentence).strip()) != sentence:
            sentence = bare
        if sentence and sentence not in seen:
            seen.append(sentence)
    out = " ".join(seen)
    return out if out and len(out) < len(" ".join(_SPEAKER.sub("", source).split())) else None


def strip_fallback(text: str) -> str:
    """Text without the fallback label (for embedding, or as input to another summary)."""
    return text.replace(FALLBACK_PREFIX, "")
