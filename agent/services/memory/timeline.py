"""The timeline (issue 42 item 4; seed 000 §4.6.3): one user's episodes and milestones in
a date range, oldest first, each with its sources (the blocks and day_table turns it was
made from). The night cycle's stage 11 writes them (night_cycle/stages/episodes.py);
`cogd timeline`, the MCP tool `timeline`, GET /v1/timeline and a chat question "what
happened in October?" (agent/domain/episodes.py timeline_question) read them here.
Scoped: a user sees only their own episodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import psycopg

from agent.db.queries import query
from agent.domain.episodes import timeline_question
from agent.domain.prompt import RecalledLine
from agent.errors import InputError

MAX_EPISODES = 500
MAX_CONTEXT_EPISODES = 12  # cogd choice: a chat turn's prompt carries at most 12 episodes
KEY_MILESTONE = 0.7  # seed 000 §4.6.3: key milestones (importance >= 0.7) are marked


def parse_day(value: str | None, name: str, *, end: bool = False) -> datetime | None:
    """A --from/--to bound: an ISO date (a --to date includes that whole day) or an ISO
    date-time (naive: UTC); None when not given."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    try:
        if len(text) <= 10:
            d = date.fromisoformat(text)
            return datetime.combine(d + timedelta(days=1) if end else d, time(), UTC)
        at = datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"{name} must be a date (YYYY-MM-DD) or an ISO date-time, "
                         f"got {value!r}") from None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def episodes(conn: psycopg.Connection[Any], user_id: Any, start: datetime | None = None,
             end: datetime | None = None, limit: int = 200) -> list[dict[str, Any]]:
    """The user's episodes overlapping [start, end), oldest first, with milestones and
    sources: the newest `limit` of them when there are more (see `page`)."""
    return page(conn, user_id, start, end, limit)[0]


def page(conn: psycopg.Connection[Any], user_id: Any, start: datetime | None = None,
         end: datetime | None = None, limit: int = 200) -> tuple[list[dict[str, Any]], bool]:
    """`episodes`, and whether older episodes in the range were left out (more than
    `limit`: the newest `limit` are kept, printed oldest first)."""
    if not 1 <= limit <= MAX_EPISODES:
        raise InputError(f"limit must be 1-{MAX_EPISODES}, got {limit}")
    if start is not None and end is not None and end <= start:
        raise InputError("the range is empty: --to must come after --from")
    rows = conn.execute(query("timeline_episodes"), {
        "user_id": user_id, "from": start, "to": end, "limit": limit + 1}).fetchall()
    truncated = len(rows) > limit
    rows = rows[1:] if truncated else rows  # one more than asked: the oldest goes
    marks: dict[str, list[dict[str, Any]]] = {}
    if rows:
        for m in conn.execute(query("timeline_milestones"), {"ids": [r[0] for r in rows]}):
            marks.setdefault(str(m[1]), []).append({
                "id": str(m[0]), "kind": m[2], "content": m[3], "at": _iso(m[4]),
                "importance": round(float(m[5]), 3), "key": float(m[5]) >= KEY_MILESTONE,
                "source_turn": None if m[6] is None else str(m[6]), "detector": m[7]})
    return [{"id": str(r[0]), "start": _iso(r[1]), "end": _iso(r[2]), "title": r[3],
             "titled_by": r[4], "terms": list(r[5] or []),
             "sessions": [str(s) for s in r[6] or []],
             "sources": {"turns": [str(t) for t in r[7] or []], "blocks": list(r[9] or [])},
             "detector": r[8], "milestones": marks.get(str(r[0]), [])} for r in rows
            ], truncated


def lines(items: list[dict[str, Any]], truncated: bool = False) -> list[str]:
    """The timeline as `cogd timeline` and the REPL print it: grouped by month, key
    milestones marked with `*` (seed 000 §4.6.3); when older episodes were left out, a
    first line says so."""
    out: list[str] = []
    if truncated:
        out.append(f"(the newest {len(items)} episodes; older ones in the range left out: "
                   "raise the limit or narrow the range)")
    month = None
    for e in items:
        m = str(e["start"])[:7]
        if m != month:
            month = m
            out.append(m)
        span = str(e["start"])[:16].replace("T", " ")
        if str(e["end"])[:10] != str(e["start"])[:10]:
            span += " .. " + str(e["end"])[:16].replace("T", " ")
        else:
            span += "-" + str(e["end"])[11:16]
        out.append(f"  {span}  {e['title']}  [episode:{e['id']}, {e['titled_by']}]")
        turns = e["sources"]["turns"]
        out.append(f"    sources: {len(turns)} turns"
                   + (f" ({', '.join(turns[:3])}{', ...' if len(turns) > 3 else ''})"
                      if turns else "")
                   + f", {len(e['sources']['blocks'])} blocks")
        for ms in e["milestones"]:
            star = "*" if ms["key"] else " "
            out.append(f"    {star} {str(ms['at'])[:10]} {ms['kind']}: "
                       f"{' '.join(ms['content'].split())[:140]}")
    return out


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


@dataclass(frozen=True)
class DatedContext:
    """What a "what happened in <period>?" turn carries: the episodes as recalled lines
    (kind `episode`, with their dates, milestones and sources) and the metadata that
    `cogd chat --json` shows (the range asked and each episode cited)."""

    lines: list[RecalledLine]
    metadata: dict[str, Any]


def timeline_context(conn: psycopg.Connection[Any], user_id: Any, message: str,
                     now: datetime, limit: int = MAX_CONTEXT_EPISODES) -> DatedContext | None:
    """The timeline of the period a chat message asks about (agent/domain/episodes.py
    timeline_question), or None when it asks about none. Episodes of the user only."""
    asked = timeline_question(message, now)
    if asked is None:
        return None
    items = episodes(conn, user_id, asked.start, asked.end, limit=limit)
    lines = []
    for e in items:
        marks = "; ".join(f"{str(m['at'])[:10]} {m['kind']}: {' '.join(m['content'].split())}"
                          for m in e["milestones"][:5])
        turns = e["sources"]["turns"]
        text = (f"episode {str(e['start'])[:16].replace('T', ' ')} to "
                f"{str(e['end'])[:16].replace('T', ' ')}: {e['title']}"
                + (f". Milestones: {marks}" if marks else "")
                + f". Sources: {len(turns)} turns ({', '.join(turns[:4])}"
                + (", ..." if len(turns) > 4 else "") + ")")
        lines.append(RecalledLine(f"episode:{e['id']}", "episode", text[:1200], "timeline",
                                  "cogd's timeline", datetime.fromisoformat(e["start"])))
    return DatedContext(lines, {
        "asked": asked.phrase, "from": asked.start.isoformat(), "to": asked.end.isoformat(),
        "detector": "timeline-question heuristic (agent/domain/episodes.py)",
        "episodes": [{"id": e["id"], "title": e["title"], "start": e["start"],
                      "end": e["end"], "sources": e["sources"],
                      "milestones": [m["id"] for m in e["milestones"]]} for e in items]})
