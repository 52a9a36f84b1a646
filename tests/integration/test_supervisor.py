"""`cogd up`'s supervisor when its database comes back (agent/supervisor.py)."""

from __future__ import annotations

from typing import Any

import psycopg

from agent.config import Settings
from agent.db.locks import advisory_key
from agent.supervisor import Supervisor


def test_a_supervisor_whose_lock_was_taken_while_the_database_was_away_gives_way(
    settings: Settings, db_url: str,
) -> None:
    """After an outage another `cogd up` holds the supervisor lock: this one must stop
    (and its workers with it) rather than run every worker a second time."""
    said: list[str] = []
    sup = Supervisor(settings, db_url, [], on_event=said.append)
    with psycopg.connect(db_url, autocommit=True) as other:
        assert other.execute("SELECT pg_try_advisory_lock(%s)",
                             (advisory_key("up"),)).fetchone() == (True,)
        lost: Any = psycopg.connect(db_url, autocommit=True)
        lost.close()  # the database went away under the supervisor's connection
        fresh = sup._check_lock(lost)
        try:
            assert sup.stop.is_set() and sup.lost_lock
            assert any("another `cogd up` took the supervisor lock" in m and "stopping" in m
                       for m in said), said
        finally:
            fresh.close()
