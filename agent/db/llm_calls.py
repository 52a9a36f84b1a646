"""The Postgres CallRecorder: one llm_calls row per model call (v_llm_calls sums them)."""

from __future__ import annotations

import logging
from typing import Any

import psycopg

from agent.db.connect import connect
from agent.errors import DatabaseError

logger = logging.getLogger(__name__)

INSERT = """
INSERT INTO llm_calls (provider, model, role, kind, tokens_in, tokens_out, latency_ms, ok,
                       error, attempts)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""


class PgCallRecorder:
    """Writes each CallRecord on its own autocommit connection (opened lazily)."""

    def __init__(self, url: str, role: str | None = None) -> None:
        self.url = url
        self.role = role  # [database] app_role of the worker that records
        self._conn: psycopg.Connection[Any] | None = None

    def record(self, rec: Any) -> None:
        row = (
            rec.provider, rec.model, rec.role, rec.kind, int(rec.tokens_in or 0),
            int(rec.tokens_out or 0), float(rec.latency_ms), bool(rec.ok),
            None if rec.error is None else str(rec.error)[:2000], int(rec.attempts or 1),
        )
        for _ in range(2):
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = connect(self.url, app="cogd-llm-calls", autocommit=True,
                                         role=self.role)
                self._conn.execute(INSERT, row)
                return
            except (psycopg.OperationalError, DatabaseError) as exc:
                logger.warning("llm_calls: could not record a call (%s); retrying once", exc)
                self._conn = None
        logger.warning("llm_calls: dropped the record of a %s call to %s", rec.kind, rec.provider)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
