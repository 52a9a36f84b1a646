"""Rolling context window and the exit gate (issue #4 step 2).

Turns of a session that no longer fit the context window's token budget "roll
out". Each is scored once by the exit gate (agent/domain/gates.py) and then:
persisted to memories (typed), persisted and flagged (contradiction: a
`contradicts` link to the memory it conflicts with), reinforcing an existing
memory, left in scratch_buffer for consolidation, or dropped. Every outcome is a
gate_decisions row (gate = 'exit') with its signals and reason. If scoring fails,
the content is put in scratch_buffer (status pending) so consolidation retries it.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import psycopg

from agent.db import day_table
from agent.db.queries import query
from agent.domain.gates import (
    EntryGateConfig,
    ExitDecision,
    ExitGateConfig,
    ExitInput,
    exit_gate,
    memory_type_hint,
    rule_signals,
)
from agent.providers.heuristic import FALLBACK_PREFIX
from agent.services.memory import claims

logger = logging.getLogger(__name__)

EXIT_GATE_LOCK = 0x65786974  # "exit": advisory lock namespace, one key per turn

DECISION_FOR = {"persist": "keep", "persist_flag": "flag", "reinforce": "keep",
                "buffer": "scratch", "drop": "drop"}
REINFORCE_GAIN = 0.05  # seed 000 §10.2 supporting evidence +0.05, diminishing (log2)


@dataclass(frozen=True)
class ExitOutcome:
    entry_id: Any
    action: str
    memory_id: Any
    reason: str


class Rollover:
    def __init__(
        self,
        entry_cfg: EntryGateConfig,
        exit_cfg: ExitGateConfig,
        relevance: Callable[[str], float | None],
        rng: random.Random | None = None,
    ) -> None:
        self.entry_cfg = entry_cfg
        self.exit_cfg = exit_cfg
        self.relevance = relevance
        self.rng = rng or random.Random()

    def rolled_out(
        self, conn: psycopg.Connection[Any], session_id: Any, budget_tokens: int, limit: int = 200
    ) -> list[tuple[Any, ...]]:
        return conn.execute(
            query("rollover_rolled_out"),
            {"session_id": session_id, "budget": budget_tokens, "limit": limit},
        ).fetchall()

    def apply_tuning(self, conn: psycopg.Connection[Any]) -> None:
        """Use the persist threshold consolidation tuned from evidence (issue #5), if any."""
        row = conn.execute(
            query("rollover_tuned_persist_threshold")
        ).fetchone()
        if row and row[0] is not None:
            self.exit_cfg = replace(self.exit_cfg, persist_threshold=float(row[0]))

    def run(
        self, conn: psycopg.Connection[Any], session_id: Any, budget_tokens: int
    ) -> list[ExitOutcome]:
        """Exit-gate every turn of the session that left the window (each once)."""
        self.apply_tuning(conn)
        out: list[ExitOutcome] = []
        for row in self.rolled_out(conn, session_id, budget_tokens):
            entry_id, role, content = row[0], row[1], row[2]
            try:
                with conn.transaction():
                    # the loop and consolidation both roll sessions out: one judges each
                    # turn, the other waits here and then sees its decision
                    conn.execute(query("rollover_lock_turn"),
                                 (EXIT_GATE_LOCK, str(entry_id)))
                    if conn.execute(query("rollover_exit_done"), (entry_id,)).fetchone():
                        continue
                    out.append(self.judge(conn, entry_id, role, content, row[4], row[5]))
            except psycopg.OperationalError:
                raise
            except Exception as exc:  # scoring failed: the scratch buffer keeps the content
                logger.exception("exit gate failed for %s", entry_id)
                with conn.transaction():
                    self._failed(conn, entry_id, content, row[4], row[5], exc)
                out.append(ExitOutcome(entry_id, "buffer", None, f"exit gate failed: {exc}"))
        return out

    def judge(
        self, conn: psycopg.Connection[Any], entry_id: Any, role: str, content: str,
        session_id: Any, user_id: Any,
    ) -> ExitOutcome:
        signals = rule_signals(content, role, self.entry_cfg)
        nearest = nearest_own_memory(conn, entry_id)
        decision = exit_gate(
            ExitInput(
                text=content,
                rule_score=round(sum(signals.values()), 4),
                nearest_similarity=None if nearest is None else float(nearest[2]),
                nearest_text=None if nearest is None else nearest[1],
                relevance=self.relevance(content),
                explicit="explicit_marker" in signals,
                fallback=role == "assistant" and content.startswith(FALLBACK_PREFIX),
            ),
            self.exit_cfg,
            self.rng,
        )
        scratch = conn.execute(
            query("rollover_scratch_of_turn"), (entry_id,)
        ).fetchone()
        scratch_id = scratch[0] if scratch else None
        memory_id = None
        if decision.persists:
            memory_id = self._persist(conn, entry_id, content, signals, decision)
            if decision.action == "persist_flag" and nearest is not None:
                conn.execute(
                    query("rollover_link_contradiction"),
                    (memory_id, nearest[0], float(nearest[2]),
                     json.dumps({"detector": "negation/value heuristic", "resolved": False})),
                )
        elif decision.action == "reinforce" and nearest is not None:
            memory_id = nearest[0]
            conn.execute(query("rollover_reinforce"),
                         {"gain": REINFORCE_GAIN, "memory_id": memory_id})
        elif decision.action == "buffer" and scratch_id is None:
            scratch_id = day_table.scratch(conn, entry_id, session_id, user_id, content,
                                           {"exit_gate": "buffer", **decision.signals})
        if scratch_id is not None and decision.action != "buffer":
            status = "persisted" if memory_id is not None else "dropped"
            conn.execute(
                query("rollover_scratch_processed"),
                (status, entry_id),
            )
        conn.execute(
            query("rollover_insert_exit"),
            (entry_id, scratch_id, session_id, DECISION_FOR[decision.action], decision.score,
             json.dumps({"action": decision.action, "column": decision.column,
                         "row": decision.row, **decision.signals}, default=str),
             decision.reason, memory_id),
        )
        return ExitOutcome(entry_id, decision.action, memory_id, decision.reason)

    def _persist(
        self, conn: psycopg.Connection[Any], entry_id: Any, content: str,
        signals: dict[str, float], decision: ExitDecision,
    ) -> Any:
        kind = memory_type_hint(content, signals)
        cell = float(decision.signals.get("cell_weight") or 0.0)
        importance = max(0.3, cell)  # the matrix cell's priority; floor for stochastic keeps
        if "explicit_marker" in signals:
            importance = max(importance, 0.8)
        metadata = {"gate": decision.action, "cell": decision.signals.get("cell")}
        if decision.action == "persist_flag":
            metadata["flag"] = "contradiction"
        params = {"type": kind, "importance": min(1.0, importance), "confidence": 0.5,
                  "metadata": json.dumps(metadata), "entry_id": entry_id}
        new = conn.execute(query("rollover_insert_memory"), params).fetchone()
        row = new or conn.execute(query("rollover_existing_memory"), params).fetchone()
        assert row is not None
        if new is not None:  # its claims on slots (issue 39 item 5): a newer one retires
            claims.record(conn, row[0])
        return row[0]

    def _failed(
        self, conn: psycopg.Connection[Any], entry_id: Any, content: str, session_id: Any,
        user_id: Any, exc: Exception,
    ) -> None:
        exists = conn.execute(
            query("rollover_pending_scratch_of_turn"), (entry_id,)
        ).fetchone()
        scratch_id = exists[0] if exists else None
        if scratch_id is None:
            scratch_id = day_table.scratch(conn, entry_id, session_id, user_id, content,
                                           {"exit_gate_error": str(exc)[:500]})
        conn.execute(
            query("rollover_insert_exit"),
            (entry_id, scratch_id, session_id, "scratch", None,
             json.dumps({"error": f"{exc.__class__.__name__}: {exc}"[:500]}),
             "exit gate failed: kept in scratch_buffer for consolidation", None),
        )


def nearest_own_memory(conn: psycopg.Connection[Any], entry_id: Any) -> Any:
    """(memory_id, content, similarity) of the memory of the turn's own user closest to
    it, or None: the exit gate never compares one user's turn with another's memories
    (issue 38; the filtered HNSW scan runs with pgvector's iterative scan, where there is
    one, for the caller's transaction)."""
    try:
        with conn.transaction():  # a savepoint: an older pgvector refuses the setting
            conn.execute(query("rollover_iterative_scan"))
    except psycopg.errors.Error as exc:
        logger.debug("hnsw iterative scan unavailable: %s", exc)
    return conn.execute(query("rollover_nearest_memory"), (entry_id,)).fetchone()


class RelevanceScorer:
    """Max cosine similarity of a text to Layer 0 values and Layer 1 goals.

    None when there are no values or goals yet (bootstrap: the exit gate is then
    permissive). Descriptions are embedded once and cached by text; the targets differ
    by user (each user's own goals), so the last TARGET_SETS sets are kept.
    """

    TARGET_SETS = 256  # cogd choice: users whose targets stay embedded between turns

    def __init__(self, embed: Callable[[Sequence[str]], Any]) -> None:
        self.embed = embed
        self.texts: list[str] = []
        self.matrix: Any = None
        self._sets: dict[tuple[str, ...], Any] = {}

    def set_targets(self, texts: Sequence[str]) -> None:
        texts = [t for t in texts if t.strip()]
        if texts == self.texts:
            return
        self.texts = list(texts)
        key = tuple(texts)
        if key not in self._sets:
            if len(self._sets) >= self.TARGET_SETS:
                self._sets.pop(next(iter(self._sets)))  # the oldest set
            self._sets[key] = np.asarray(self.embed(self.texts)) if texts else None
        self.matrix = self._sets[key]

    def __call__(self, text: str) -> float | None:
        if self.matrix is None:
            return None
        vec = np.asarray(self.embed([text]))[0]
        sims = self.matrix @ vec
        return float(np.max(sims)) if len(sims) else None


