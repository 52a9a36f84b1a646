"""The heuristic fallback LLM: deterministic and extractive, and it says so.

It answers with the sentences of the *material* it is given that share the most words
with the last user message. Material is the conversation (every message but the system
prompt and the question itself) and the listed items of any message (lines starting
"- ": recalled memories, the memories to consolidate); never the instructions (a system
prompt's prose, a task line such as "Insight:"), which it would otherwise quote back.
Every answer starts with "[heuristic fallback] " and carries fallback=True; it never
pretends to be a model.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

from agent.providers.llm_base import BaseLLM, StreamMeta
from agent.providers.ports import CallRecorder, ChatResult, Usage

FALLBACK_PREFIX = "[heuristic fallback] "
HEURISTIC_MODEL = "extractive-v1"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"\w+", re.UNICODE)
_STOPWORDS = frozenset(
    {
        "a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by", "for",
        "with", "from", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its",
        "this", "that", "these", "those", "i", "you", "he", "she", "we", "they", "me", "my", "your",
        "our", "their", "do", "does", "did", "what", "which", "who", "whom", "how", "when", "where",
        "why", "can", "could", "would", "should", "will", "shall", "may", "might", "not", "no",
        "yes", "so", "than", "then", "there", "here", "about", "into", "over", "under", "again",
        "just", "also"
    }
)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS and len(w) > 1]


def extract(question: str, context: str, max_sentences: int = 3, max_chars: int = 1200) -> str:
    """The context sentences most relevant to the question, in their original order."""
    sentences = [s.strip() for s in _SENTENCE.split(context) if s.strip()]
    query = set(_words(question))
    if not sentences or not query:
        return ""
    doc_freq: Counter[str] = Counter()
    tokenised = [_words(s) for s in sentences]
    for words in tokenised:
        doc_freq.update(set(words))
    n = len(sentences)
    scored: list[tuple[float, int]] = []
    for i, words in enumerate(tokenised):
        overlap = query.intersection(words)
        if not overlap:
            continue
        score = sum(math.log(1 + n / doc_freq[w]) for w in overlap) / math.sqrt(len(words) + 1)
        scored.append((score, i))
    best = sorted(scored, key=lambda p: (-p[0], p[1]))[:max_sentences]
    picked = [sentences[i] for _, i in sorted(best, key=lambda p: p[1])]
    return " ".join(picked)[:max_chars]


_ITEM = re.compile(r"^\s*-\s+(.*\S)\s*$")
_TAG = re.compile(r"^(\[\w+:[^\]]+\])\s+\([^)]*\)\s+")  # "[memory:x] (memory, strong_match) "


def material(messages: list[dict[str, str]], last: int) -> tuple[str, str]:
    """(the question, the material to answer from): the question is the last user
    message without its listed items; the material is every other non-system message and
    the listed items ("- ...") of every message, one per line."""
    items: list[str] = []
    prose: list[str] = []
    for i, m in enumerate(messages):
        lines = m["content"].splitlines()
        listed = [_TAG.sub(r"\1 ", hit.group(1)) for ln in lines if (hit := _ITEM.match(ln))]
        items += listed
        if m["role"] != "system" and i != last:
            prose += [ln for ln in lines if not _ITEM.match(ln)]
    question = "\n".join(ln for ln in messages[last]["content"].splitlines()
                          if not _ITEM.match(ln)) if messages else ""
    return question, "\n".join(prose + items)


class HeuristicLLM(BaseLLM):
    """The offline fallback for every role; deterministic (temperature is ignored)."""

    provider = "heuristic"

    def __init__(
        self, max_tokens: int = 256, recorder: CallRecorder | None = None, role: str | None = None
    ) -> None:
        super().__init__(HEURISTIC_MODEL, 0.0, max_tokens, recorder, role)

    def answer(self, messages: list[dict[str, str]], max_tokens: int) -> str:
        users = [i for i, m in enumerate(messages) if m["role"] == "user"]
        last = users[-1] if users else len(messages) - 1
        question, context = material(messages, last)
        picked = extract(question, context, max_chars=max(40, max_tokens * 4))
        if picked:
            return FALLBACK_PREFIX + picked
        return (
            FALLBACK_PREFIX
            + "no language model is configured for this role and nothing in the context "
            "matches the question, so there is no answer to give."
        )

    def _chat(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int,
        want_logprobs: bool,
    ) -> ChatResult:
        text = self.answer(messages, max_tokens)
        usage = Usage(self.counter.count_messages(messages), self.counter.count(text))
        return ChatResult(
            text=text, provider=self.provider, model=self.model, usage=usage,
            logprobs=None, fallback=True, finish_reason="stop",
        )

    def _stream(
        self, messages: list[dict[str, str]], temperature: float, max_tokens: int
    ) -> Iterator[str | StreamMeta]:
        text = self.answer(messages, max_tokens)
        yield from re.findall(r"\S+\s*", text)
