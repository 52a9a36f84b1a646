"""What every consolidation operation is given (its stage contract, as night_cycle's
RunContext is the stages'): the pass's configs, its models and collaborators, and
`should_stop`. An operation is a module with `NAME` and

    run(ctx: PassContext, conn, now) -> dict | None

returning None when it changed nothing, else {"inputs": ..., "outputs": ...} (both
optional), which the pass (runner.py) writes to consolidation_log. Each runs in its own
transaction; the pass runs them in the order of runner.OPERATIONS.

Also here: the helpers more than one operation uses (the newest active memories, grouping
by user, vectors from their text form).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.domain.gates import EntryGateConfig, ExitGateConfig
from agent.domain.tables import need
from agent.domain.text import storable_text

if TYPE_CHECKING:
    from agent.config import Settings
    from agent.providers.ports import LLM, Embedder
    from agent.services.conversation.rollover import RelevanceScorer, Rollover
    from agent.services.memory.indexing import Indexer
    from agent.services.memory.profile import Profile
    from agent.services.reach.handoff import NoteWriter
    from agent.services.reach.workflows import Workflows
    from agent.services.thinking.decisions import DecisionTracker
    from agent.services.thinking.models_principles import ModelsOp, PrinciplesOp

MAX_MEMORIES = 2000


@dataclass(frozen=True)
class PassConfig:
    """What a pass reads from the settings, parsed once (`from_settings`): [consolidation],
    [compulsion_safety], the gates, and the keys it reads from [goals], [intentions] and
    [context]."""

    consolidation: rules.ConsolidationConfig
    safety: rules.SafetyConfig
    entry_gate: EntryGateConfig
    exit_gate: ExitGateConfig
    promoted_initial_weight: float  # [goals]: a promoted goal's first weight
    evidence_gain: float  # [goals]: the weight a goal gains per new piece of evidence
    urgency_decay_after_days: float  # [intentions]
    urgency_decay_per_day: float  # [intentions]
    session_quiet_minutes: float  # [context]: a session this quiet gets its note

    @classmethod
    def from_settings(cls, settings: Settings) -> PassConfig:
        return cls(
            consolidation=rules.ConsolidationConfig.from_table(settings.consolidation),
            safety=rules.SafetyConfig.from_table(settings.compulsion_safety),
            entry_gate=EntryGateConfig.from_table(settings.entry_gate),
            exit_gate=ExitGateConfig.from_table(settings.exit_gate),
            promoted_initial_weight=float(need(settings.goals, "promoted_initial_weight")),
            evidence_gain=float(need(settings.goals, "evidence_gain")),
            urgency_decay_after_days=float(need(settings.intentions,
                                                "urgency_decay_after_days")),
            urgency_decay_per_day=float(need(settings.intentions, "urgency_decay_per_day")),
            session_quiet_minutes=float(need(settings.context, "session_quiet_minutes")),
        )


@dataclass
class PassContext:
    """The pass's config, its models and the collaborators its operations call (built by
    agent/runtime.py `Runtime.consolidator`), and `should_stop` (the pass's)."""

    config: PassConfig
    llm: LLM  # the consolidation role's model (insights, contradictions, the rewrite screen)
    universal: Embedder
    native: Embedder
    relevance: RelevanceScorer  # the rollover's relevance to values and goals
    rollover: Rollover  # the exit gate's verdict on scratch rows
    indexer: Indexer  # memories and blocks only (turns keep their writers' vectors)
    notes: NoteWriter  # continuation notes
    workflows: Workflows
    decisions: DecisionTracker
    models_op: ModelsOp
    principles_op: PrinciplesOp
    profile: Profile  # the user profile's reader (issue 42 item 1)
    should_stop: Callable[[], bool] = lambda: False

    @property
    def cfg(self) -> rules.ConsolidationConfig:
        return self.config.consolidation

    @property
    def safety(self) -> rules.SafetyConfig:
        return self.config.safety

    @property
    def exit_cfg(self) -> ExitGateConfig:
        return self.config.exit_gate


def storable(text: str) -> str:
    """Model text jsonb can hold: NUL removed, no lone surrogates."""
    return storable_text(text, nul="")[0]


def per_user(rows: list[tuple[Any, ...]]) -> list[list[int]]:
    """The indexes of `rows` by the user in their last column, each user's in the rows'
    order (memories of no user together)."""
    by_user: dict[Any, list[int]] = {}
    for i, r in enumerate(rows):
        by_user.setdefault(r[-1], []).append(i)
    return list(by_user.values())


def array(text: str) -> np.ndarray[Any, Any]:
    return np.asarray(json.loads(text), dtype=np.float32)


def active(conn: psycopg.Connection[Any], *, insights: bool = True) -> list[tuple[Any, ...]]:
    """The newest active memories (oldest first); `insights`: with insights. The
    last column is the memory's user (see per_user)."""
    return conn.execute(query("consolidation_active_memories"),
                        {"insights": insights, "k": MAX_MEMORIES}).fetchall()[::-1]
