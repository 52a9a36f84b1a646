"""What every stage is given: settings, the connection, the run, its time bounds, the
models (built on first use) and the day-table turns (loaded once, cached)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from agent.config import Settings
from agent.db.queries import query
from agent.domain.tables import need
from agent.providers.ports import LLM, Embedder
from night_cycle.progress import Progress
from night_cycle.runs import Run
from night_cycle.vectors import Vec, parse_vector


@dataclass(frozen=True)
class Turn:
    entry_id: str
    session_id: str
    user_id: str | None
    tier: str
    role: str
    content: str
    vector: Vec | None
    perplexity: float | None
    created_at: datetime
    turn_number: int | None
    message_type: str


def _turn(r: Sequence[Any]) -> Turn:
    return Turn(r[0], r[1], r[2], r[3], r[4], r[5], parse_vector(r[6]),
                None if r[7] is None else float(r[7]), r[8], r[9], r[10])


@dataclass
class RunContext:
    settings: Settings
    conn: psycopg.Connection[Any]
    run: Run
    cutoff: datetime
    now: datetime
    progress: Progress
    _turns: dict[str, Turn] = field(default_factory=dict)
    _models: dict[str, Any] = field(default_factory=dict)

    @property
    def cfg(self) -> dict[str, Any]:
        return dict(self.settings.night_cycle)

    @property
    def retention(self) -> dict[str, Any]:
        return dict(self.settings.retention)

    @property
    def default_tier(self) -> str:
        return str(need(self.retention, "default_tier"))

    def _model(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._models:
            self._models[key] = build()
        return self._models[key]

    def universal(self) -> Embedder:
        from agent.providers import factory

        emb: Embedder = self._model(
            "universal", lambda: factory.build_universal_embedder(self.settings))
        return emb

    def native(self) -> Embedder:
        from agent.providers import factory

        def build() -> Embedder:
            uni = self.universal()
            nat = factory.build_native_embedder(self.settings)
            return uni if nat.model_id == uni.model_id else nat

        emb: Embedder = self._model("native", build)
        return emb

    def llm(self) -> LLM:
        from agent.providers import factory

        llm: LLM = self._model("llm", lambda: factory.build_llm(self.settings, "night_cycle"))
        return llm

    def cortex(self) -> Any:
        from agent.cortex.lance import LanceCortex

        return self._model("cortex", lambda: LanceCortex.from_settings(self.settings))

    def candidate_turns(self) -> list[Turn]:
        rows = self.conn.execute(
            query("night_context_candidates"),
            {"cutoff": self.cutoff, "default_tier": self.default_tier},
        ).fetchall()
        turns = [_turn(r) for r in rows]
        self._turns.update((t.entry_id, t) for t in turns)
        return turns

    def turns(self, ids: Iterable[str]) -> list[Turn]:
        """Turns by entry id, in the order asked (loaded from day_table when not cached)."""
        wanted = list(ids)
        missing = [i for i in wanted if i not in self._turns]
        for start in range(0, len(missing), 5000):
            rows = self.conn.execute(
                query("night_context_turns_by_ids"),
                {"ids": missing[start:start + 5000], "default_tier": self.default_tier},
            ).fetchall()
            self._turns.update((t.entry_id, t) for t in map(_turn, rows))
        return [self._turns[i] for i in wanted if i in self._turns]

    def cycle_key(self, when: datetime) -> str:
        """The cycle a time belongs to: the date of the cycle's start (boundary hour, UTC)."""
        hour = int(need(self.cfg, "cycle_boundary_hour_utc"))
        days = max(1, int(need(self.retention, "cycle_days")))
        shifted = when.astimezone(UTC) - timedelta(hours=hour)
        ordinal = shifted.date().toordinal()
        start = ordinal - (ordinal % days)
        return datetime.fromordinal(start).date().isoformat()
