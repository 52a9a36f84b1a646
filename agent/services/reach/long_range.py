"""Long-range memory at a session start (issue 42 item 2; seed 000 §4.6.1-4.6.2): what a
recall on the first message would not find, because nothing in it asks.

- Landmarks (§4.6.2): the user's active memories flagged `landmark` when written, or at
  least [consolidation] landmark_min_importance (0.9) important, at every session start
  whatever their age; at most [recall] landmarks_at_session_start, most important first.
- The temporal sweep (§4.6.1): for each window [recall] sweep_window_start_days[i] to
  sweep_window_end_days[i] days before the session starts (recent, medium, distant,
  deep), the sweep_items_per_window[i] most important active memories of at least
  sweep_min_importance (memories and milestones); deduplicated by their first 80
  characters (and against the landmarks), then told oldest first.

Both read only the user's own rows. The sweep reads memories and the night cycle's
milestones (revision 0025), as the seed's reads both collections; landmarks are memories.
They are handoff items (kinds `landmark` and `sweep`), within the handoff's budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain import handoff as rules
from agent.domain.tables import need
from agent.errors import ConfigError

PREFIX_CHARS = 80  # seed 000 §4.6.1: deduplicated by content prefix (first 80 characters)
WINDOW_NAMES = ("recent", "medium", "distant", "deep")


@dataclass(frozen=True)
class LongRangeConfig:
    """[recall] landmarks_at_session_start and sweep_*; [consolidation]
    landmark_min_importance."""

    landmarks: int
    landmark_min_importance: float
    window_start_days: tuple[float, ...]
    window_end_days: tuple[float, ...]
    items_per_window: tuple[int, ...]
    min_importance: float

    @classmethod
    def from_tables(cls, recall: Mapping[str, Any], consolidation: Mapping[str, Any]
                    ) -> LongRangeConfig:
        cfg = cls(
            landmarks=int(need(recall, "landmarks_at_session_start")),
            landmark_min_importance=float(need(consolidation, "landmark_min_importance")),
            window_start_days=tuple(float(x) for x in need(recall, "sweep_window_start_days")),
            window_end_days=tuple(float(x) for x in need(recall, "sweep_window_end_days")),
            items_per_window=tuple(int(x) for x in need(recall, "sweep_items_per_window")),
            min_importance=float(need(recall, "sweep_min_importance")))
        n = len(cfg.window_start_days)
        if len(cfg.window_end_days) != n or len(cfg.items_per_window) != n:
            raise ConfigError("recall.sweep_window_start_days, sweep_window_end_days and "
                              "sweep_items_per_window must have one value per window")
        for start, end in zip(cfg.window_start_days, cfg.window_end_days, strict=True):
            if not 0 <= start < end:
                raise ConfigError(f"recall.sweep window {start}-{end} days: the start must "
                                  "be at least 0 and before the end")
        return cfg


def _prefix(text: str) -> str:
    return " ".join(text.split())[:PREFIX_CHARS].casefold()


class LongRange:
    """The landmarks and the temporal sweep of one session start."""

    def __init__(self, cfg: LongRangeConfig) -> None:
        self.cfg = cfg

    def items(self, conn: psycopg.Connection[Any], user_id: Any, at: datetime
              ) -> list[rules.HandoffItem]:
        """The landmarks (most important first), then the sweep (oldest first)."""
        if user_id is None:
            return []
        seen: set[str] = set()
        out: list[rules.HandoffItem] = []
        if self.cfg.landmarks > 0:
            for mid, content, _imp, when in conn.execute(query("long_range_landmarks"), {
                    "user": user_id, "min": self.cfg.landmark_min_importance,
                    "k": self.cfg.landmarks}):
                seen.add(_prefix(content))
                out.append(rules.HandoffItem(
                    "landmark", f"memory:{mid}",
                    f"[LANDMARK] {rules.one_line(content, 240)} ({when:%Y-%m-%d}) "
                    f"[memory:{mid}]", (f"memory:{mid}",)))
        swept: list[tuple[datetime, rules.HandoffItem]] = []
        for i, (start, end, k) in enumerate(zip(
                self.cfg.window_start_days, self.cfg.window_end_days,
                self.cfg.items_per_window, strict=True)):
            if k <= 0:
                continue
            name = WINDOW_NAMES[i] if i < len(WINDOW_NAMES) else f"window {i + 1}"
            for kind, mid, content, _imp, when in conn.execute(query("long_range_window"), {
                    "user": user_id, "min": self.cfg.min_importance, "at": at,
                    "start": start, "end": end, "k": k}):
                key = _prefix(content)
                if key in seen:
                    continue
                seen.add(key)
                swept.append((when, rules.HandoffItem(
                    "sweep", f"{kind}:{mid}",
                    f"[LONG-RANGE MEMORY, {name}] {rules.one_line(content, 240)} "
                    f"({when:%Y-%m-%d}) [{kind}:{mid}]", (f"{kind}:{mid}",))))
        return out + [item for _, item in sorted(swept, key=lambda x: x[0])]
