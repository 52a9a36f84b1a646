"""Per turn: predictions (agent/services/thinking/predictions.py) and reasoning trails
(agent/services/thinking/decisions.py), called by the loop
(agent/services/conversation/cognition.py) for the user turn in `context` and for the
agent's reply in `commit`. What it returns goes into the turn's metadata (`cogd chat
--json`): predictions made and settled, decisions stored and outcomes linked."""

from __future__ import annotations

from typing import Any

import psycopg

from agent.db.queries import query
from agent.services.thinking.decisions import DecisionTracker
from agent.services.thinking.predictions import PredictionTracker


class Foresight:
    """Built once per process (agent/runtime.py: Runtime.foresight)."""

    def __init__(self, predictions: PredictionTracker, decisions: DecisionTracker) -> None:
        self.predictions = predictions
        self.decisions = decisions

    def user_turn(self, conn: psycopg.Connection[Any], entry_id: Any, content: str
                  ) -> dict[str, Any]:
        """Settle what this user turn reports, then store what it predicts or decides."""
        row = conn.execute(query("foresight_turn"), (entry_id,)).fetchone()
        if row is None or row[1] is None:  # no user: nothing to track for anyone
            return {}
        meta: dict[str, Any] = {}
        settled = self.predictions.settle(conn, entry_id, content)
        made = self.predictions.detect(conn, entry_id, content, row[0], "user")
        if settled or made:
            meta["predictions"] = {"made": [made] if made else [], "settled": settled}
        outcomes = self.decisions.link_outcomes(conn, entry_id, content)
        decided = self.decisions.detect(conn, entry_id, content)
        if outcomes or decided:
            meta["decisions"] = {"made": [decided] if decided else [], "outcomes": outcomes}
        return meta

    def agent_turn(self, conn: psycopg.Connection[Any], entry_id: Any, content: str
                   ) -> dict[str, Any]:
        """The agent's own prediction in its reply ("I expect ...", "will probably ...")."""
        row = conn.execute(query("foresight_turn"), (entry_id,)).fetchone()
        if row is None or row[1] is None:
            return {}
        made = self.predictions.detect(conn, entry_id, content, row[0], "agent")
        return {"agent_predictions": [made]} if made else {}
