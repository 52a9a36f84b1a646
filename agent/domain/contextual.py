"""Contextual indexing (seed 003 §17e; issue "Recall that finds what was said", item 1).

A turn is indexed *in context*: who said it, the session's date, and for a short reply
the turn it answers, e.g.

    (8 May 2023) Ana said, replying to Ben ("Did you adopt the cat?"): Yes, on Saturday!

That text (`index_text`) is what the universal vector of a day_table turn embeds and
what its BM25 lexicon entry holds; `content` stays verbatim. Memories are indexed with
their source turn's speaker and date, holographic blocks with their arc's date. The
recipe is versioned: a row built by an older RECIPE_VERSION (or none) is rebuilt by
`cogd reindex`. Questions name people and times; bare turns carry neither.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent.domain.lexical import terms
from agent.domain.tables import scalar_fields

# bump when any function below renders differently: `cogd reindex` rebuilds older rows.
# 2: a short turn quotes the turn before only when that asked a question, or when it has
# at most reply_max_terms words of its own (1 quoted the turn before every short turn)
RECIPE_VERSION = 2


@dataclass(frozen=True)
class IndexConfig:
    reply_max_words: int
    reply_max_terms: int
    reply_context_words: int
    max_chars: int
    # the live loop embeds a turn's contextual text after the reply commits (issue 15: the
    # turn write is the verbatim vector, the insert and the gate; the second embedding was
    # half of it); the lexical entry is written with the turn either way
    vector_after_commit: bool

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> IndexConfig:
        return cls(**scalar_fields(cls, t, {"index_reply_max_words": "reply_max_words",
                                             "index_reply_max_terms": "reply_max_terms",
                                             "index_reply_context_words": "reply_context_words",
                                             "index_max_chars": "max_chars",
                                             "index_vector_after_commit":
                                                 "vector_after_commit"}))

    def may_quote(self, content: str) -> bool:
        """Short enough to be a reply that needs the turn it answers."""
        return len(content.split()) <= self.reply_max_words

    def quotes(self, content: str, previous: str) -> bool:
        """Whether a turn is indexed with the turn before it: a short answer to a
        question ("Love it, the battery lasts two days" after "How is the Pixel 8?"), or
        a short reply with next to no words of its own ("Haha, same"); not a short
        statement after a statement ("I go to kickboxing on Tuesdays"), whose vector
        the quote would outweigh."""
        return self.may_quote(content) and (
            previous.rstrip().endswith("?") or len(terms(content)) <= self.reply_max_terms)


@dataclass(frozen=True)
class Said:
    """A turn as the index renders it: whose words, which role, when."""

    content: str
    role: str
    speaker: str | None = None
    when: datetime | None = None


def speaker_label(speaker: str | None, role: str) -> str:
    """The name a turn is attributed to: its speaker, else its role ("the assistant")."""
    if speaker and speaker.strip():
        return speaker.strip()
    return {"assistant": "the assistant", "system": "the system"}.get(role, "the user")


def date_label(when: datetime | None) -> str:
    return "" if when is None else f"{when.day} {when:%B %Y}"


def _clip_words(text: str, n: int) -> str:
    words = text.split()
    return " ".join(words[:n]) + (" ..." if len(words) > n else "")


def turn_text(turn: Said, previous: Said | None, cfg: IndexConfig) -> str:
    """The contextual text of one turn; `previous` is the turn before it in its session."""
    who = speaker_label(turn.speaker, turn.role)
    head = f"({date_label(turn.when)}) {who} said" if turn.when else f"{who} said"
    if previous is not None and cfg.quotes(turn.content, previous.content):
        other = speaker_label(previous.speaker, previous.role)
        quoted = _clip_words(previous.content, cfg.reply_context_words)
        head += f", replying to {other} (\"{quoted}\")"
    return f"{head}: {turn.content}"[: cfg.max_chars]


def memory_text(content: str, source: Said | None, cfg: IndexConfig) -> str:
    """A memory in the context of the turn it came from (speaker and date)."""
    if source is None:
        return content[: cfg.max_chars]
    who = speaker_label(source.speaker, source.role)
    when = f"({date_label(source.when)}) " if source.when else ""
    return f"{when}{who}: {content}"[: cfg.max_chars]


# a block's bookkeeping keys: ids and labels, not words anyone said
_NOT_PROSE = frozenset({"type", "kind", "constituent_blocks", "block_id"})


def prose_text(prose: Any) -> str:
    """The words of a holographic block's prose (a JSON document), without its keys."""
    if isinstance(prose, str):
        try:
            prose = json.loads(prose)
        except ValueError:
            return prose
    parts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            parts.append(node)
        elif isinstance(node, Mapping):
            for key, value in node.items():
                if key not in _NOT_PROSE and not str(key).endswith(("_id", "_ids")):
                    walk(value)
        elif isinstance(node, list | tuple):
            for value in node:
                walk(value)

    walk(prose)
    return " ".join(p for p in parts if p.strip())


def block_text(prose: Any, when: datetime | None, cfg: IndexConfig) -> str:
    """A holographic block: its arc's date and the text of its prose."""
    head = f"({date_label(when)}) " if when else ""
    return f"{head}{prose_text(prose)}"[: cfg.max_chars]
