"""night_cycle_runs: one row per run, a checkpoint per finished stage.

checkpoints = {"cutoff": ISO time, "dir": run directory, "stages": {"1": {...}, ...}}:
rows created before the cutoff belong to this run; a stage listed in "stages" is done
(its summary, and the hash of its artifact when it has one).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query


@dataclass
class Run:
    run_id: int
    started_at: datetime
    status: str
    stage: int
    checkpoints: dict[str, Any] = field(default_factory=dict)

    @property
    def stages(self) -> dict[str, Any]:
        stages = self.checkpoints.setdefault("stages", {})
        assert isinstance(stages, dict)
        return stages

    def done(self, stage: int) -> bool:
        return str(stage) in self.stages


def _row(r: Any) -> Run:
    return Run(int(r[0]), r[1], str(r[2]), int(r[3]), dict(r[4] or {}))


def start(conn: psycopg.Connection[Any], checkpoints: dict[str, Any]) -> Run:
    row = conn.execute(query("night_runs_start"), (json.dumps(checkpoints),)).fetchone()
    assert row is not None
    return _row(row)


def unfinished(conn: psycopg.Connection[Any]) -> list[Run]:
    """Runs that never finished (crashed, killed, failed), newest first."""
    rows = conn.execute(query("night_runs_unfinished")).fetchall()
    return [_row(r) for r in rows]


def last(conn: psycopg.Connection[Any]) -> Run | None:
    row = conn.execute(query("night_runs_last")).fetchone()
    return None if row is None else _row(row)


def update_checkpoints(conn: psycopg.Connection[Any], run: Run) -> None:
    conn.execute(query("night_runs_checkpoints"),
                 (json.dumps(run.checkpoints, default=str), run.stage, run.run_id))


def checkpoint(
    conn: psycopg.Connection[Any], run: Run, stage: int, summary: dict[str, Any]
) -> None:
    """Record a finished stage (call inside the stage's own transaction when it has one)."""
    run.stages[str(stage)] = summary
    run.stage = max(run.stage, stage)
    update_checkpoints(conn, run)


def finish(conn: psycopg.Connection[Any], run: Run, summary: dict[str, Any]) -> None:
    conn.execute(query("night_runs_finish"), (json.dumps(summary, default=str), run.run_id))


def fail(conn: psycopg.Connection[Any], run_id: int, error: str) -> None:
    conn.execute(query("night_runs_fail"), (error[:2000], run_id))
