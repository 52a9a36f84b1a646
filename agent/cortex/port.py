"""The port recall searches the cortex through (agent/services/memory/recall.py), and its
empty stand-in before the first night cycle; LanceDB implements it (agent/cortex/store.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import psycopg

from agent.domain.broad import ClusterNode, LeafBlock


class CortexStore(Protocol):
    """Long-term blocks in LanceDB (issue #6, agent/cortex): search returns (id, content,
    similarity); reconsolidate heals the blocks recall returned (seed 001 §9.6)."""

    def search(self, vector: Sequence[float], k: int, query_text: str | None = None,
               user_id: str | None = None) -> list[tuple[str, str, float]]: ...

    def reconsolidate(self, conn: psycopg.Connection[Any], ids: Sequence[str],
                      session_id: Any = None) -> list[dict[str, Any]]: ...

    def cluster_tree(self) -> tuple[list[ClusterNode], dict[str, LeafBlock]]:
        """The RAPTOR nodes (levels 1-3) and the blocks under them, for broad questions
        (agent/domain/broad.py)."""
        ...


class EmptyCortex:
    """No cortex yet: the night cycle has not migrated anything (issue #6)."""

    def search(self, vector: Sequence[float], k: int, query_text: str | None = None,
               user_id: str | None = None) -> list[tuple[str, str, float]]:
        return []

    def reconsolidate(self, conn: psycopg.Connection[Any], ids: Sequence[str],
                      session_id: Any = None) -> list[dict[str, Any]]:
        return []

    def cluster_tree(self) -> tuple[list[ClusterNode], dict[str, LeafBlock]]:
        return [], {}
