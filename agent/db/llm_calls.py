"""The Postgres CallRecorder: one llm_calls row per model call (v_llm_calls sums them)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import psycopg

from agent.db.queries import query
from agent.errors import DatabaseError

logger = logging.getLogger(__name__)

class PgCallRecorder:
    """Writes each CallRecord on a connection borrowed from the process's pool (one
    statement, autocommit); a record the database cannot take is logged as dropped."""

    def __init__(self, checkout: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
                 ) -> None:
        self.checkout = checkout

    def record(self, rec: Any) -> None:
        row = (
            rec.provider, rec.model, rec.role, rec.kind, int(rec.tokens_in or 0),
            int(rec.tokens_out or 0), float(rec.latency_ms), bool(rec.ok),
            None if rec.error is None else str(rec.error)[:2000], int(rec.attempts or 1),
        )
        for _ in range(2):
            try:
                with self.checkout() as conn:
                    conn.execute(query("llm_calls_insert"), row)
                return
            except (psycopg.OperationalError, DatabaseError) as exc:
                logger.warning("llm_calls: could not record a call (%s); retrying once", exc)
        logger.warning("llm_calls: dropped the record of a %s call to %s", rec.kind, rec.provider)
