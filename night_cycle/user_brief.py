"""The sections of a user's morning brief that seed 000 §9.7 asks for, besides the blocks
and overnight thoughts (night_cycle/brief.py): a TL;DR first, the predictions falling
due, the 3D-cognition updates (cognitive models and principles made or changed,
predictions checked) and the open contradictions. Issue 42 item 8.

Everything is the user's own: each query is scoped to the user's id, and a contradiction
is listed only when both of its memories are theirs. "Since" is the user's previous
brief (or [night_cycle] brief_due_days back, for a first brief). A contradiction is open
while both memories are active: resolving it supersedes the losing one (or both, merged).

The TL;DR is the named TLDR_HEURISTIC: two or three sentences put together from the
counts and the strongest block's excerpt, not a model's summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain.tables import need

TLDR_HEURISTIC = "heuristic:brief-tldr-v1"


@dataclass(frozen=True)
class BriefConfig:
    """[night_cycle] brief_due_days, brief_items."""

    due: timedelta
    items: int

    @classmethod
    def from_table(cls, t: Mapping[str, Any]) -> BriefConfig:
        return cls(due=timedelta(days=float(need(t, "brief_due_days"))),
                   items=int(need(t, "brief_items")))


@dataclass
class Sections:
    due: list[tuple[Any, ...]] = field(default_factory=list)
    settled: list[tuple[Any, ...]] = field(default_factory=list)
    models: list[tuple[Any, ...]] = field(default_factory=list)
    principles: list[tuple[Any, ...]] = field(default_factory=list)
    contradictions: list[tuple[Any, ...]] = field(default_factory=list)


def _flat(text: Any, n: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= n else flat[: n - 3] + "..."


def gather(conn: psycopg.Connection[Any], user_id: Any, run_id: Any, now: datetime,
           cfg: BriefConfig) -> Sections:
    row = conn.execute(query("user_brief_since"), {"user": user_id, "run": run_id}).fetchone()
    since = (row[0] if row and row[0] else None) or now - cfg.due
    who = {"user": user_id, "k": cfg.items, "since": since}
    return Sections(
        due=conn.execute(query("user_brief_predictions_due"),
                         {**who, "until": now + cfg.due}).fetchall(),
        settled=conn.execute(query("user_brief_predictions_settled"), who).fetchall(),
        models=conn.execute(query("user_brief_models"), who).fetchall(),
        principles=conn.execute(query("user_brief_principles"), who).fetchall(),
        contradictions=conn.execute(query("user_brief_contradictions"), who).fetchall())


def users(conn: psycopg.Connection[Any], now: datetime, cfg: BriefConfig
          ) -> list[tuple[Any, str]]:
    """The users with a prediction due, a model changed lately or an open contradiction
    (each gets a brief even when the run formed no block of theirs)."""
    return [(r[0], r[1]) for r in conn.execute(query("user_brief_users"), {
        "until": now + cfg.due, "since_default": now - cfg.due})]


def tldr(turns: int, blocks: int, top: str | None, s: Sections, now: datetime) -> str:
    """TLDR_HEURISTIC: what the night found, in two or three sentences."""
    first = (f"The night went through {turns} of your turns in {blocks} blocks"
             + (f"; the strongest: {_flat(top, 140)}" if top else "") + ".")
    counts = []
    if s.due:
        overdue = sum(1 for r in s.due if r[3] < now)
        counts.append(f"{len(s.due)} prediction(s) falling due"
                      + (f" ({overdue} overdue)" if overdue else ""))
    if s.models or s.principles or s.settled:
        counts.append(f"{len(s.models) + len(s.principles) + len(s.settled)} model "
                      "update(s)")
    if s.contradictions:
        counts.append(f"{len(s.contradictions)} open contradiction(s) to settle")
    second = ("To look at: " + ", ".join(counts) + ".") if counts else (
        "Nothing falls due and nothing contradicts itself.")
    return f"{first} {second}"


def render(s: Sections, now: datetime) -> list[str]:
    """The sections' markdown lines (empty sections left out)."""
    out: list[str] = []
    if s.due:
        out += ["", "## Predictions falling due", ""]
        for pid, statement, conf, deadline in s.due:
            late = " (overdue)" if deadline < now else ""
            out.append(f"- {deadline:%Y-%m-%d}{late}, confidence {conf:.2f} "
                       f"(`prediction:{pid}`): {_flat(statement)}")
    if s.models or s.principles or s.settled:
        out += ["", "## Model updates (3D cognition)", ""]
        for mid, statement, status, conf, new in s.models:
            out.append(f"- {'new' if new else 'changed'} model, {status}, confidence "
                       f"{conf:.2f} (`model:{mid}`): {_flat(statement)}")
        for pid, statement, status, conf in s.principles:
            out.append(f"- principle, {status}, confidence {conf:.2f} "
                       f"(`principle:{pid}`): {_flat(statement)}")
        for pid, statement, status, _at in s.settled:
            out.append(f"- prediction checked: {status.replace('_', ' ')} "
                       f"(`prediction:{pid}`): {_flat(statement)}")
    if s.contradictions:
        out += ["", "## Open contradictions", ""]
        for a, a_text, b, b_text, _at in s.contradictions:
            out.append(f"- `memory:{a}` \"{_flat(a_text, 140)}\" contradicts `memory:{b}` "
                       f"\"{_flat(b_text, 140)}\"")
    return out
