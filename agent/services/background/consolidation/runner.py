"""The consolidation pass: every operation in order, each in its own transaction, each
logged (consolidation_log) when it changed something.

An operation is a module of this package with `NAME` and `run(ctx, conn, now)` (the
contract is in context.py); OPERATIONS is the order. `Consolidator` builds the pass's
context once and keeps one method per operation (tests and the night cycle call one
alone).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import psycopg

from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.services.background.consolidation import (
    continuation,
    contradictions,
    corrections,
    decay,
    decisions,
    drain_scratch,
    gate_tuning,
    goal_safety,
    index,
    intentions,
    merge,
    models,
    predictions,
    principles,
    profile,
    promotion,
    strengthen,
    workflows,
)
from agent.services.background.consolidation.context import PassConfig, PassContext

if TYPE_CHECKING:
    from agent.providers.ports import LLM, Embedder
    from agent.services.conversation.rollover import RelevanceScorer, Rollover
    from agent.services.memory.indexing import Indexer
    from agent.services.memory.profile import Profile
    from agent.services.reach.handoff import NoteWriter
    from agent.services.reach.workflows import Workflows
    from agent.services.thinking.decisions import DecisionTracker
    from agent.services.thinking.models_principles import ModelsOp, PrinciplesOp

Op = Callable[[PassContext, psycopg.Connection[Any], datetime], dict[str, Any] | None]

# the order of a pass (seed 003 §Consolidation, and the thinking-layer operations)
OPERATIONS: list[tuple[str, Op]] = [(m.NAME, m.run) for m in (
    drain_scratch, strengthen, merge, contradictions, decay, corrections, models, principles,
    intentions, continuation, profile, predictions, decisions, workflows, promotion, goal_safety,
    gate_tuning, index)]


@dataclass
class PassReport:
    pass_id: str
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    stopped_early: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.operations)

    def as_dict(self) -> dict[str, Any]:
        return {"pass_id": self.pass_id, "changed": self.changed,
                "stopped_early": self.stopped_early, "operations": self.operations}


class Consolidator:
    """One consolidation pass over the database. `config`: PassConfig.from_settings; the
    collaborators (keyword-only) as agent/runtime.py `Runtime.consolidator` builds them:
    PassContext names each."""

    def __init__(self, config: PassConfig, *, llm: LLM, universal: Embedder, native: Embedder,
                 relevance: RelevanceScorer, rollover: Rollover, indexer: Indexer,
                 notes: NoteWriter, workflows: Workflows, decisions: DecisionTracker,
                 models_op: ModelsOp, principles_op: PrinciplesOp, profile: Profile) -> None:
        self.ctx = PassContext(
            config=config, llm=llm, universal=universal, native=native, relevance=relevance,
            rollover=rollover, indexer=indexer, notes=notes, workflows=workflows,
            decisions=decisions, models_op=models_op, principles_op=principles_op,
            profile=profile)
        self.ops: list[tuple[str, Op]] = list(OPERATIONS)

    # the pass's models and config, as its callers read them
    @property
    def llm(self) -> LLM:
        return self.ctx.llm

    @property
    def universal(self) -> Embedder:
        return self.ctx.universal

    @property
    def native(self) -> Embedder:
        return self.ctx.native

    @property
    def cfg(self) -> rules.ConsolidationConfig:
        return self.ctx.cfg

    @property
    def writes_insights(self) -> bool:
        return merge.writes_insights(self.ctx)

    # -- the pass -------------------------------------------------------------

    def run_pass(self, conn: psycopg.Connection[Any], now: datetime | None = None,
                 should_stop: Callable[[], bool] = lambda: False) -> PassReport:
        """Every operation in order; `should_stop` is checked between operations and inside
        the long ones, so a worker asked to stop ends its pass early (each operation's
        work is committed, and the next pass carries on where this one stopped)."""
        now = now or datetime.now(UTC)
        report = PassReport(str(uuid.uuid4()))
        self.ctx.should_stop = should_stop
        for name, op in self.ops:
            if should_stop():
                report.stopped_early = True
                break
            with conn.transaction():
                result = op(self.ctx, conn, now)
                if result:
                    report.operations[name] = result
                    conn.execute(
                        query("consolidation_log_insert"),
                        (report.pass_id, name, json.dumps(result.get("inputs", {}), default=str),
                         json.dumps(result.get("outputs", {}), default=str)),
                    )
        return report

    # -- one operation alone (outside a pass: no transaction or log of its own) -----

    def drain_scratch(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return drain_scratch.run(self.ctx, conn, now)

    def strengthen(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return strengthen.run(self.ctx, conn, now)

    def merge(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return merge.run(self.ctx, conn, now)

    def contradictions(self, conn: psycopg.Connection[Any], now: datetime
                       ) -> dict[str, Any] | None:
        return contradictions.run(self.ctx, conn, now)

    def decay(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return decay.run(self.ctx, conn, now)

    def corrections(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return corrections.run(self.ctx, conn, now)

    def models(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return models.run(self.ctx, conn, now)

    def principles(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return principles.run(self.ctx, conn, now)

    def intentions(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return intentions.run(self.ctx, conn, now)

    def continuation(self, conn: psycopg.Connection[Any], now: datetime
                     ) -> dict[str, Any] | None:
        return continuation.run(self.ctx, conn, now)

    def profile(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return profile.run(self.ctx, conn, now)

    def predictions(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return predictions.run(self.ctx, conn, now)

    def decisions(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return decisions.run(self.ctx, conn, now)

    def workflows(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return workflows.run(self.ctx, conn, now)

    def promotion(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return promotion.run(self.ctx, conn, now)

    def goal_safety(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return goal_safety.run(self.ctx, conn, now)

    def gate_tuning(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return gate_tuning.run(self.ctx, conn, now)

    def index(self, conn: psycopg.Connection[Any], now: datetime) -> dict[str, Any] | None:
        return index.run(self.ctx, conn, now)
