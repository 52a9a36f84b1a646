"""The idle default-mode network worker: ticks on an adaptive heartbeat.

The interval follows how long the agent has been idle, seen through turn
notifications (1 min after a task, 5 after 10 min idle, 15 after an hour, 30
after 4 h; `[idle]` in config, with `seconds_per_minute` scaling the clock).
A user turn's notification runs the proactive-recall pass for that turn at once
(`Dmn.proactive_turn`); the tick's pass is the catch-up for missed notifications.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import psycopg

from agent.bus import Channel, Event, Kind
from agent.errors import CogdError, DatabaseError
from agent.workers.base import Worker

logger = logging.getLogger(__name__)


class IdleWorker(Worker):
    name = "idle"
    channels = (Channel.TURN,)
    singleton = True

    def setup(self) -> None:
        from agent.domain.dmn import DmnConfig

        self.dmn = self.runtime.dmn()
        self.cfg = DmnConfig.from_table(self.settings.idle)
        self.last_activity = time.monotonic()
        self.last_tick: float | None = None
        self.last_result: dict[str, Any] = {}

    on: ClassVar[Mapping[Kind, str]] = {Kind.TURN: "on_turn"}

    def on_turn(self, event: Event) -> None:
        """A turn: the agent is busy again; a user turn gets its proactive pass now
        (seed 002 §1: within seconds), not on the next tick. The tick's pass catches up
        on turns whose notification was missed."""
        self.last_activity = time.monotonic()
        assert self.conn is not None
        try:
            made = self.dmn.proactive_turn(self.conn, event.id)
        except (psycopg.OperationalError, psycopg.InterfaceError, DatabaseError):
            raise  # the connection is gone: Worker._guarded reconnects
        except (psycopg.Error, CogdError) as exc:  # one turn's pass (rolled back), not the worker
            logger.warning("idle: the proactive pass of turn %s failed (%s); left to the tick",
                           event.id, exc)
            return
        self.items_done += len(made)
        if made:
            self.last_result = {**self.last_result, "proactive_on_notify": len(made)}

    def next_interval_s(self) -> float:
        from agent.domain.dmn import heartbeat_seconds

        return heartbeat_seconds(time.monotonic() - self.last_activity, self.cfg)

    def poll(self) -> None:
        if self.last_tick is not None and (
                time.monotonic() - self.last_tick < self.next_interval_s()):
            return
        self.once()

    def once(self) -> dict[str, Any]:
        assert self.conn is not None
        result = self.dmn.tick(self.conn)
        self.last_tick = time.monotonic()
        self.items_done += len(result.get("proactive") or []) + int(bool(result.get("surfaced")))
        self.last_result = {"proactive": len(result.get("proactive") or []),
                            "surfaced": (result.get("surfaced") or {}).get("kind"),
                            "gut_delta_norm": result["gut"]["delta_norm"],
                            "next_tick_s": round(self.next_interval_s(), 3)}
        return result

    def info(self) -> dict[str, Any]:
        return {**super().info(), "last_tick": self.last_result}
