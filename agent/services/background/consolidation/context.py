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

from agent.config import Settings
from agent.db.queries import query
from agent.domain import consolidation as rules
from agent.domain.gates import ExitGateConfig
from agent.domain.text import storable_text

if TYPE_CHECKING:
    from agent.services.conversation.rollover import RelevanceScorer, Rollover
    from agent.services.memory.indexing import Indexer

MAX_MEMORIES = 2000


@dataclass
class PassContext:
    settings: Settings
    cfg: rules.ConsolidationConfig
    safety: rules.SafetyConfig
    goals_cfg: Any
    intent_cfg: Any
    exit_cfg: ExitGateConfig
    universal: Any
    native: Any
    llm: Any
    relevance: RelevanceScorer
    rollover: Rollover
    indexer: Indexer
    should_stop: Callable[[], bool] = lambda: False
    notes: Any = None  # the continuation notes' writer, built on first use
    workflows: Any = None  # workflow detection (seed 000 §10.5), on first use


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
