"""The consolidation worker: a pass on its own adaptive timer, woken by turn notifications.

Interval (seed 003 §Consolidation): 60 minutes, shortened toward 15 after a busy
stretch (20+ turns since the last pass) and lengthened toward 120 when nothing
happened. `[consolidation] seconds_per_minute` scales the clock (tests).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from agent.bus import Channel, Event, Kind
from agent.domain.tables import need
from agent.workers.base import Worker

logger = logging.getLogger(__name__)

BUSY_TURNS = 20  # cogd choice: "adaptive 15-120 min based on activity" gives no activity level


class ConsolidationWorker(Worker):
    name = "consolidate"
    channels = (Channel.TURN,)
    singleton = True

    def setup(self) -> None:
        self.runtime.record_calls()
        self.consolidator = self.runtime.consolidator()
        self.last_pass: float | None = None
        self.turns_since = 0
        self.last_report: dict[str, Any] = {}

    def interval_s(self) -> float:
        c = self.settings.consolidation
        minute = float(need(c, "seconds_per_minute"))
        if self.turns_since >= BUSY_TURNS:
            return float(need(c, "interval_min_minutes")) * minute
        if self.turns_since == 0:
            return float(need(c, "interval_max_minutes")) * minute
        return float(need(c, "interval_minutes")) * minute

    # the listener's `reconnected` is no turn: it only wakes the poll
    on: ClassVar[Mapping[Kind, str]] = {Kind.TURN: "on_turn"}

    def on_turn(self, event: Event) -> None:
        self.turns_since += 1

    def poll(self) -> None:
        if self.last_pass is not None and time.monotonic() - self.last_pass < self.interval_s():
            return
        self.once()

    def once(self) -> dict[str, Any]:
        assert self.conn is not None
        report = self.consolidator.run_pass(self.conn, should_stop=self.stop.is_set)
        self.last_pass = time.monotonic()
        self.turns_since = 0
        self.items_done += len(report.operations)
        self.last_report = {"pass_id": report.pass_id, "operations": sorted(report.operations)}
        logger.info("consolidate: pass %s changed %s", report.pass_id,
                    ", ".join(report.operations) or "nothing")
        return report.as_dict()

    def info(self) -> dict[str, Any]:
        return {**super().info(), "last_pass": self.last_report}
