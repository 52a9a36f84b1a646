"""Consolidation and idle (DMN) worker processes — lifecycle only, for now.

STUB: these processes run, heartbeat, take their singleton lock, LISTEN and poll,
so `cogd up` and compose can supervise them; their passes (merge, decay, promotion,
DMN surfacing, proactive recall) arrive with issue #5. Each says so in its
heartbeat info and its log.
"""

from __future__ import annotations

import logging
from typing import Any

from agent.bus import Channel
from agent.workers.base import Worker

logger = logging.getLogger(__name__)

STUB_NOTE = "stub: lifecycle only; the pass itself arrives with issue #5"


class ConsolidationWorker(Worker):
    name = "consolidate"
    channels = (Channel.TURN,)
    singleton = True

    def setup(self) -> None:
        logger.warning("consolidate: %s", STUB_NOTE)

    def info(self) -> dict[str, Any]:
        return {**super().info(), "note": STUB_NOTE}


class IdleWorker(Worker):
    name = "idle"
    channels = (Channel.TURN,)
    singleton = True

    def setup(self) -> None:
        logger.warning("idle: %s", STUB_NOTE)

    def info(self) -> dict[str, Any]:
        return {**super().info(), "note": STUB_NOTE}
