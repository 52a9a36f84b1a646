"""The watermarks and markers consolidation (and the DMN) keep in worker_state: a second
pass with no new input finds nothing to do."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from agent.db.queries import query


def get_state(conn: psycopg.Connection[Any], key: str) -> dict[str, Any]:
    row = conn.execute(query("consolidation_state_load"), (key,)).fetchone()
    return dict(row[0]) if row else {}


def set_state(conn: psycopg.Connection[Any], key: str, value: dict[str, Any]) -> None:
    conn.execute(
        query("consolidation_state_save"),
        (key, json.dumps(value, default=str)),
    )
