"""The cortex as recall sees it: search with drift fallback, and reconsolidation on access
(seed 001 §1.3, §9.6).

search: probe the native vectors with the native query; when the best similarity is
below the drift threshold ([recall] cortex_drift_min_similarity), the stored native
vectors were written by another model: navigate by the frozen universal vectors instead
(the archive is searched that way too).

reconsolidate: re-embed each retrieved block's live zones with the current native model,
record the delta in vector_history, heal the stored native vector (in the cortex and in
the hippocampus row), promote an archived block back to the cortex, and log an epiphany
turn (day_table, message_type = 'epiphany') when the delta passes the threshold, with a
thought of kind 'epiphany' that the next relevant turn shows once as a double take
(seed 001 §9.8.2; agent/services/reach/double_takes.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from agent.config import Settings
from agent.cortex.lance import (
    ARCHIVE,
    BLOCKS,
    CLUSTERS,
    CortexOpenError,
    CortexWriteError,
    LanceCortex,
    cortex_uri,
)
from agent.db import day_table
from agent.db.queries import query, vector_text
from agent.domain.broad import ClusterNode, LeafBlock
from agent.domain.night_reconsolidation import reconsolidation_event, shift_description
from agent.domain.tables import need
from agent.providers.ports import Embedder

logger = logging.getLogger(__name__)

class LanceCortexStore:
    """agent.cortex.port.CortexStore backed by LanceDB."""

    def __init__(self, cortex: LanceCortex, universal: Embedder, native: Embedder, *,
                 drift_min_similarity: float, epiphany_delta: float) -> None:
        self.cortex = cortex
        self.universal = universal
        self.native = native
        self.drift_min_similarity = drift_min_similarity
        self.epiphany_delta = epiphany_delta

    def search(self, vector: Sequence[float], k: int, query_text: str | None = None,
               user_id: str | None = None) -> list[tuple[str, str, float]]:
        """(block id, prose, similarity): native probe first, universal when it drifted.
        `user_id`: that user's blocks (and blocks of no user) only."""
        if query_text and self.native.model_id != self.universal.model_id:
            probe = self.native.embed_query(query_text)
            hits = self.cortex.search_blocks([float(x) for x in probe], k, column="native",
                                             include_archive=False, user_id=user_id)
            if hits and hits[0].similarity >= self.drift_min_similarity:
                return [(h.id, h.content, h.similarity) for h in hits]
        hits = self.cortex.search_blocks(vector, k, user_id=user_id)
        return [(h.id, h.content, h.similarity) for h in hits]

    def search_level(self, vector: Sequence[float], level: int, k: int,
                     user_id: str | None = None) -> list[dict[str, Any]]:
        """seed 001 §5.4 retrieve_at_level: 0 = blocks, 1-3 = RAPTOR nodes. `user_id`
        (level 0 only): that user's blocks and blocks of no user."""
        if level == 0:
            return [{"id": h.id, "level": 0, "similarity": h.similarity, "content": h.content,
                     "archived": h.archived}
                    for h in self.cortex.search_blocks(vector, k, user_id=user_id)]
        if user_id is not None:
            raise ValueError("search_level: user_id applies to level 0 only")
        return [{"id": c["cluster_id"], "level": c["level"], "similarity": c["similarity"],
                 "content": c["summary_text"], "summarizer": c["summarizer"],
                 "parent": c["parent_cluster_id"], "members": c["member_ids"],
                 "member_count": c["member_count"], "leaf_count": c["leaf_count"]}
                for c in self.cortex.search_clusters(vector, level, k)]

    def cluster_tree(self) -> tuple[list[ClusterNode], dict[str, LeafBlock]]:
        """The RAPTOR nodes (levels 1-3, stage 8's cortex_clusters) and every block they
        may hold (cortex and archive): when, whose, and its source turns."""
        nodes = [ClusterNode(
            cluster_id=r["cluster_id"], level=int(r["level"]), summary=r["summary_text"] or "",
            member_ids=tuple(json.loads(r["member_ids"] or "[]")),
            leaf_count=int(r["leaf_count"] or 0), vector=r["summary_vector"])
            for r in self.cortex.rows(CLUSTERS, columns=[
                "cluster_id", "level", "summary_text", "member_ids", "leaf_count",
                "summary_vector"])]
        if not nodes:
            return [], {}
        blocks: dict[str, LeafBlock] = {}
        for name in (ARCHIVE, BLOCKS):  # a block in both (promoted back): the cortex's row
            for r in self.cortex.rows(name, columns=[
                    "block_id", "user_id", "arc_start_time", "arc_end_time", "created_at",
                    "flux_metrics"]):
                try:
                    flux = json.loads(r["flux_metrics"] or "{}")
                except ValueError:
                    flux = {}
                entries = flux.get("entry_ids") if isinstance(flux, dict) else None
                blocks[r["block_id"]] = LeafBlock(
                    r["block_id"], r["arc_start_time"] or r["created_at"],
                    r["arc_end_time"] or r["created_at"], r["user_id"],
                    tuple(str(e) for e in entries or ()))
        return nodes, blocks

    def reconsolidate(self, conn: psycopg.Connection[Any], ids: Sequence[str],
                      session_id: Any = None) -> list[dict[str, Any]]:
        """Heal the native vectors of these retrieved blocks; one event per block."""
        found = self.cortex.get_blocks(list(dict.fromkeys(ids)))
        if not found:
            return []
        now = datetime.now(UTC)
        texts = [r["live_zones_text"] or r["prose_text"] or " " for r, _ in found]
        fresh = self.native.embed_documents(texts)
        events: list[dict[str, Any]] = []
        healed: list[dict[str, Any]] = []
        promoted: list[str] = []
        for (row, archived), new in zip(found, fresh, strict=True):
            old = None if row["native"] is None else np.asarray(row["native"], np.float32)
            event = reconsolidation_event(old, np.asarray(new, np.float32),
                                          model_version=self.native.model_id,
                                          epiphany_delta=self.epiphany_delta, when=now)
            previous_model = row["native_model"]
            history = [*json.loads(row["vector_history"] or "[]"), event]
            row.update(native=np.asarray(new, np.float32).tolist(),
                       native_model=self.native.model_id, last_accessed=now,
                       vector_history=json.dumps(history))
            row.pop("archived_at", None)
            healed.append(row)
            if archived:
                promoted.append(row["block_id"])
            conn.execute(query("cortex_heal_hippocampus"),
                         (vector_text(new), self.native.model_id, now, json.dumps([event]),
                          row["block_id"]))
            out = {"block_id": row["block_id"], **event, "promoted_from_archive": archived}
            if event["event"] == "epiphany":
                out["epiphany_entry_id"] = self._log_epiphany(
                    conn, row, event, previous_model, session_id)
            events.append(out)
        self.cortex.upsert(BLOCKS, healed, "block_id")
        self.cortex.delete(ARCHIVE, promoted, "block_id")  # promoted back, seed 001 §5.5.1
        return events

    def _log_epiphany(self, conn: psycopg.Connection[Any], row: dict[str, Any],
                      event: dict[str, Any], previous_model: str | None,
                      session_id: Any) -> str | None:
        """seed 001 §9.8.3: the realisation persists in the day table."""
        note = shift_description(event["delta_magnitude"], previous_model, event["model_version"])
        content = f"[epiphany] memory [memory:{row['block_id']}]: {note}"
        meta = {"trigger_block_id": row["block_id"], "delta_magnitude": event["delta_magnitude"],
                "shift_description": note}
        uvec = self.universal.embed_documents([content])[0]
        try:
            with conn.transaction():  # a savepoint when the caller holds a transaction
                got = day_table.insert(
                    conn, session_id=session_id or row["session_id"], user_id=row["user_id"],
                    user_tier=row["user_tier"], role="system", content=content,
                    universal=vector_text(uvec), message_type="epiphany",
                    epiphany_metadata=meta)
                if got is not None:  # the double take: shown once, in a relevant turn
                    prose = " ".join((row["live_zones_text"] or row["prose_text"] or "").split())
                    conn.execute(query("cortex_epiphany_thought"), (
                        f"[cortex:{row['block_id']}] {note} It reads: {prose[:300]}",
                        f"cortex:{row['block_id']}",
                        json.dumps([f"cortex:{row['block_id']}", f"day_table:{got[0]}",
                                    {"delta_magnitude": event["delta_magnitude"],
                                     "excerpt": prose[:300]}]),
                        row["user_id"]))
        except psycopg.Error as exc:  # the block's session may be gone: keep recall working
            logger.warning("could not log the epiphany on %s: %s", row["block_id"], exc)
            return None
        return None if got is None else str(got[0])


class CortexWhenPresent:
    """The cortex store once its tables exist; empty answers until then.

    Opening is retried at most every `retry_s` seconds, so a loop started before the
    first night cycle picks the cortex up without a restart.
    """

    def __init__(self, settings: Settings, universal: Embedder,
                 native: Embedder | Callable[[], Embedder] | None = None,
                 retry_s: float = 30.0) -> None:
        self.settings = settings
        self.universal = universal
        self.native = native
        self.retry_s = retry_s
        self._store: LanceCortexStore | None = None
        self._next_try = 0.0

    def store(self) -> LanceCortexStore | None:
        import time

        if self._store is not None or time.monotonic() < self._next_try:
            return self._store
        self._next_try = time.monotonic() + self.retry_s
        uri = cortex_uri(self.settings)
        if "://" not in uri and not (Path(uri) / f"{BLOCKS}.lance").exists():
            return None
        cfg = self.settings.night_cycle
        try:
            cortex = LanceCortex.from_settings(
                self.settings, read_consistency_s=float(need(cfg, "cortex_read_consistency_s")))
            if not (cortex.exists(BLOCKS) or cortex.exists(ARCHIVE)):
                return None
        except (CortexOpenError, OSError, RuntimeError, ValueError) as exc:
            # an object store that does not answer (or a bucket that is not there):
            # recall goes on without the cortex and tries again in retry_s
            logger.warning("%s; recalling from the hippocampus only for now",
                           exc if isinstance(exc, CortexOpenError)
                           else CortexOpenError(uri, exc))
            return None
        # an embedder, or a builder of one (the runtime's, built when the cortex opens)
        native = self.native() if callable(self.native) else self.native
        if native is None:
            from agent.providers import factory

            built = factory.build_native_embedder(self.settings)
            native = self.universal if built.model_id == self.universal.model_id else built
        self._store = LanceCortexStore(
            cortex, self.universal, native,
            drift_min_similarity=float(need(self.settings.recall, "cortex_drift_min_similarity")),
            epiphany_delta=float(need(cfg, "epiphany_delta")))
        return self._store

    def search(self, vector: Sequence[float], k: int, query_text: str | None = None,
               user_id: str | None = None) -> list[tuple[str, str, float]]:
        store = self.store()
        if store is None:
            return []
        try:
            return store.search(vector, k, query_text, user_id)
        except (OSError, RuntimeError, ValueError) as exc:  # recall goes on without it
            logger.warning("cortex search failed (%s); recalling from the hippocampus only",
                           exc)
            return []

    def reconsolidate(self, conn: psycopg.Connection[Any], ids: Sequence[str],
                      session_id: Any = None) -> list[dict[str, Any]]:
        store = self.store()
        if store is None:
            return []
        try:
            return store.reconsolidate(conn, ids, session_id)
        except (OSError, RuntimeError, ValueError, CortexWriteError) as exc:
            logger.warning("cortex reconsolidation failed (%s); the blocks stay as they were",
                           exc)
            return []

    def cluster_tree(self) -> tuple[list[ClusterNode], dict[str, LeafBlock]]:
        store = self.store()
        if store is None:
            return [], {}
        try:
            return store.cluster_tree()
        except (OSError, RuntimeError, ValueError) as exc:  # recall goes on without it
            logger.warning("reading the cortex's RAPTOR nodes failed (%s); no cluster nodes",
                           exc)
            return [], {}
