"""The contextual index of stored rows: built, and rebuilt when the recipe changes.

New turns are indexed by the write path (agent/services/records/turns.py). Everything else (turns
from before revision 0007 or an older RECIPE_VERSION, memories, holographic blocks) is
indexed here, in batches: `cogd reindex` for all of it, and `index_pending` after the
writers of memories and blocks. Each row gets its index_text (agent/domain/contextual.py)
and index_tsv (agent/domain/lexical.tokens), from which a trigger keeps the BM25 lexicon
(lexical_postings) in step; a day_table turn also gets its index_embedding (the universal
model's vector of its index_text). Memories and blocks keep the vectors their writers
gave them (consolidation compares memories by those): their contextual entry is lexical
only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from agent.db.queries import query, vector_text
from agent.domain.contextual import (
    RECIPE_VERSION,
    IndexConfig,
    Said,
    block_text,
    memory_text,
    turn_text,
)
from agent.domain.lexical import tokens, tsvector_literal
from agent.providers.ports import Embedder
from agent.services.records.turns import fill_contextual_vectors

KINDS = ("day_table", "memory", "block")


@dataclass
class IndexReport:
    indexed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    pending: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"indexed": dict(self.indexed), "pending_before": dict(self.pending),
                "recipe_version": RECIPE_VERSION}


class Indexer:
    def __init__(self, universal: Embedder | None, cfg: IndexConfig) -> None:
        """`universal`: the embedder turns are re-embedded with (None: memories and
        blocks only, whose vectors are left as their writers made them)."""
        self.universal = universal
        self.cfg = cfg

    def pending(self, conn: psycopg.Connection[Any]) -> dict[str, int]:
        """Rows per kind whose index is missing or from an older recipe."""
        row = conn.execute(query("index_pending_counts"), {"version": RECIPE_VERSION}).fetchone()
        return dict(zip(KINDS, (int(x) for x in row), strict=True)) if row else {}

    def run(
        self, conn: psycopg.Connection[Any], *, kinds: Sequence[str] = KINDS,
        everything: bool = False, batch: int = 256, limit: int | None = None,
        progress: Callable[[str, int], None] | None = None, count: bool = True,
    ) -> IndexReport:
        """Index what is pending, `batch` rows per transaction, at most `limit` per kind.
        `everything`: rebuild every row, whatever its version (after a recipe change
        that kept the version, or to re-embed with another universal model)."""
        if everything:
            with conn.transaction():
                conn.execute(query("index_reset"))
        report = IndexReport(pending=self.pending(conn) if count else {})
        steps = {"day_table": self._turns, "memory": self._memories, "block": self._blocks}
        for kind in kinds:
            done_ids: set[Any] = set()
            while limit is None or report.indexed[kind] < limit:
                size = batch if limit is None else min(batch, limit - report.indexed[kind])
                with conn.transaction():
                    n = steps[kind](conn, size, done_ids)
                if not n:
                    break
                report.indexed[kind] += n
                if progress:
                    progress(kind, n)
        return report

    def _select(self, conn: psycopg.Connection[Any], name: str, size: int,
                done: set[Any]) -> list[Any]:
        """The next `size` pending rows; `done` guards against a row that stays pending."""
        rows = conn.execute(query(name), {"version": RECIPE_VERSION,
                                          "k": size + len(done)}).fetchall()
        fresh = [r for r in rows if r[0] not in done][:size]
        done.update(r[0] for r in fresh)
        return fresh

    def _turns(self, conn: psycopg.Connection[Any], size: int, done: set[Any]) -> int:
        rows = self._select(conn, "index_turns", size, done)
        if not rows:  # then the turns the live loop left without their contextual vector
            return (0 if self.universal is None
                    else fill_contextual_vectors(conn, self.universal, size))
        assert self.universal is not None, "turns are re-embedded: give the Indexer an embedder"
        texts = [
            turn_text(Said(r[1], r[2], r[3], r[4]),
                      None if r[5] is None else Said(r[5], r[6], r[7]), self.cfg)
            for r in rows
        ]
        vectors = self.universal.embed_documents(texts)
        for r, text, vec in zip(rows, texts, vectors, strict=True):
            conn.execute(query("index_turn_update"), {
                "id": r[0], "text": text, "tsv": tsvector_literal(tokens(text)),
                "version": RECIPE_VERSION, "universal": vector_text(vec)})
        return len(rows)

    def _memories(self, conn: psycopg.Connection[Any], size: int, done: set[Any]) -> int:
        rows = self._select(conn, "index_memories", size, done)
        for r in rows:
            source = None if r[2] is None else Said("", r[2], r[3], r[4])
            self._update(conn, "index_memory_update", r[0], memory_text(r[1], source, self.cfg))
        return len(rows)

    def _blocks(self, conn: psycopg.Connection[Any], size: int, done: set[Any]) -> int:
        rows = self._select(conn, "index_blocks", size, done)
        for r in rows:
            self._update(conn, "index_block_update", r[0], block_text(r[1], r[2], self.cfg))
        return len(rows)

    def _update(self, conn: psycopg.Connection[Any], name: str, rid: Any, text: str) -> None:
        conn.execute(query(name), {"id": rid, "text": text,
                                   "tsv": tsvector_literal(tokens(text)),
                                   "version": RECIPE_VERSION})


def index_pending(conn: psycopg.Connection[Any], indexer: Indexer,
                  kinds: Sequence[str] = ("memory", "block"), limit: int = 512) -> IndexReport:
    """Index memories and blocks their writers just stored (bounded: a backlog is
    `cogd reindex`'s)."""
    return indexer.run(conn, kinds=kinds, limit=limit, count=False)

