"""What the REPL's slash commands and the memory commands show: plain text from rows.

/identity /goals /status /recall /why /remember /forget (agent/commands/chat.py)
and `cogd recall` share these, so both read the same tables the same way.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import psycopg

from agent.config import Settings
from agent.db import audit, catalog
from agent.db.queries import query
from agent.domain.prompt import IdentityConfig, identity_hash
from agent.errors import InputError
from agent.services.identity import load_traits


def identity_text(conn: psycopg.Connection[Any], settings: Settings) -> str:
    cfg = IdentityConfig.from_tables(settings.identity, settings.context, settings.goals)
    traits = load_traits(conn)
    if not traits:
        return "identity is blank (no boundaries yet: the loop adds them on its first turn)"
    return identity_hash(traits, [], cfg)


def goals_text(conn: psycopg.Connection[Any]) -> str:
    """The operator's list: every active goal, and whose it is (a promoted goal is its
    user's and reaches only that user's prompt)."""
    goals = conn.execute(query("introspect_all_goals")).fetchall()
    if not goals:
        return ("no active goals yet: consolidation promotes one when something you say "
                "recurs (by default 5 times over 14 days); `cogd proposals` lists the values "
                "waiting for your approval")
    return "\n".join(f"{w:.2f}  {name}: {desc}  ({'user ' + who if who else 'everyone'})"
                     for name, w, desc, who in goals)


def status_text(conn: psycopg.Connection[Any]) -> str:
    procs = conn.execute(query("introspect_processes")).fetchall()
    counts = catalog.row_counts(conn, ("day_table", "scratch_buffer", "memories",
                                       "gate_decisions", "recall_log"))
    lines = [f"{n} pid {p}: {s}{'' if a else ' (stale)'}" for n, p, s, a in procs] or [
        "no worker processes (answering in-process)"
    ]
    lines.append("  ".join(f"{t}={c}" for t, c in counts.items()))
    return "\n".join(lines)


def format_recall(payload: dict[str, Any]) -> str:
    lines = [f"verdict: {payload['verdict']}  ({payload['latency_ms']:.0f} ms, "
             f"{payload['candidates']} candidates)"]
    if payload.get("window"):
        w = payload["window"]
        lines.append(f"  asks about {w['phrase']!r}: {w['start'][:10]} .. {w['end'][:10]}")
    if payload.get("broad"):
        b = payload["broad"]
        lines.append(f"  broad question ({b['detector']}, cue {b['cue']!r}): "
                     f"{b['nodes']} RAPTOR node(s)")
    for i in payload["items"]:
        text = " ".join(i["content"].split())
        if len(text) > 160:
            text = text[:157] + "..."
        said = " ".join(x for x in (
            (i.get("created_at") or "")[:10], f"{i['speaker']}:" if i.get("speaker") else "") if x)
        lines.append(f"  {i['verdict']:<12} {i['score']:.3f}  {i['id']}  "
                     f"{said + ' ' if said else ''}{text}")
        ext = i["sources"]["external"]
        if ext:
            lines.append(f"  {'':<12} sources: {', '.join(ext)}")
        blocks = i["sources"].get("blocks") or []  # a RAPTOR node's member blocks
        if blocks:
            lines.append(f"  {'':<12} blocks: " + ", ".join(
                f"{b['block_id']} ({(b['end'] or b['start'] or '')[:10]})" for b in blocks))
    return "\n".join(lines)


def recall_payload(outcome: Any) -> dict[str, Any]:
    r = outcome.result
    return {
        "query": outcome.query_text,
        "verdict": r.verdict,
        "latency_ms": round(outcome.latency_ms, 2),
        "candidates": r.candidates,
        "reranked": r.reranked,
        "window": None if r.window is None else r.window.as_dict(),
        "rewrites": r.rewrites,
        "rewritten_by": r.rewritten_by,
        "broad": r.broad,  # the broad-question heuristic's decision, when it fired
        "items": [i.as_dict() for i in r.items],
    }


def why_text(conn: psycopg.Connection[Any], payload: dict[str, Any], user_id: Any) -> str:
    """Where the matching memories come from: their source turns; then the reasoning
    trails (decisions) linked to those memories and turns or containing the query, of
    `user_id` (and of no user) only: another user's decisions never show."""
    from agent.services.decisions import trails_for

    lines = [format_recall(payload)]
    memories, entries = [], []
    for item in payload["items"][:5]:
        if item["id"].startswith("memory:"):
            memories.append(item["id"].split(":", 1)[1])
        for entry in item["sources"]["day_table"]:
            entries.append(str(entry))
            row = conn.execute(
                query("introspect_source_turn"),
                (entry,),
            ).fetchone()
            if row:
                lines.append(f"  <- {item['id']} from turn {entry} ({row[1]}, "
                             f"{row[0]:%Y-%m-%d %H:%M}): {' '.join(row[2].split())}")
    lines += trail_lines(trails_for(conn, memories=memories, entries=entries,
                                    text=payload.get("query") or None,
                                    user_id=user_id), "  ")
    return "\n".join(lines)


def trail_lines(trails: list[dict[str, Any]], pad: str = "") -> list[str]:
    """A reasoning trail (seed 000 §8.2-8.3) as `cogd why` prints it: the decision, the
    alternatives considered and why not, the rationale, the outcome and its lesson."""
    lines: list[str] = []
    for t in trails:
        lines.append(f"{pad}Decision: {' '.join(t['decision'].split())}  "
                     f"[decision:{t['decision_id']}, {t['detector']}]")
        alts = [a.get("option", "") + (f" ({a['why_not']})" if a.get("why_not") else "")
                for a in t["alternatives"] if isinstance(a, dict)]
        considered = "; ".join(alts) if alts else "(no alternatives recorded)"
        lines.append(f"{pad}Considered: {considered}")
        lines.append(f"{pad}Because: {t['rationale'] or '(no reason recorded)'}")
        if t["outcome"]:
            lines.append(f"{pad}Outcome: {' '.join(t['outcome'].split())} ({t['assessment']})")
        else:
            lines.append(f"{pad}Outcome: not known yet")
        if t.get("lesson"):
            lines.append(f"{pad}Lesson: {t['lesson']}")
    return lines


def remember(
    conn: psycopg.Connection[Any], loop: Any, session_id: Any, user_id: Any, text: str
) -> Any:
    """An explicit memory: written as a day_table turn first, then persisted."""
    from agent.services.turns import TurnInput

    with conn.transaction():
        written = loop.writer.write(
            conn, [TurnInput(session_id=session_id, user_id=user_id, role="user",
                             content=text, message_type="system")],
        )
        entry = written[0]
        assert entry is not None
        row = conn.execute(
            query("introspect_remember"),
            (loop_hint(text, loop.writer.gate_cfg), json.dumps({"gate": "explicit /remember"}),
             entry.entry_id),
        ).fetchone()
        assert row is not None
        audit.append(conn, "user", "remember", str(row[0]), {"entry_id": str(entry.entry_id)})
    return row[0]


def loop_hint(text: str, gate_cfg: Any) -> str:
    from agent.domain.gates import memory_type_hint, rule_signals

    return memory_type_hint(text, rule_signals(text, "user", gate_cfg))


def forget(conn: psycopg.Connection[Any], arg: str) -> str:
    """Archive a memory: never deleted, still queryable, audit-logged."""
    try:
        mid = uuid.UUID(arg.strip().removeprefix("memory:"))
    except ValueError:
        raise InputError(f"/forget needs a memory id (a uuid), got {arg!r}") from None
    with conn.transaction():
        row = conn.execute(
            query("introspect_archive_memory"), (mid,),
        ).fetchone()
        if row is None:
            raise InputError(f"no memory {mid}")
        audit.append(conn, "user", "forget", str(mid), {"status": "archived"})
    return f"memory {mid} archived (kept, still searchable; see audit_log)"


def memory_containing(conn: psycopg.Connection[Any], text: str) -> Any:
    """The memory whose text contains `text` (case-insensitive), an active one first, the
    newest first; InputError when none does."""
    row = conn.execute(
        query("introspect_memory_containing"), (text,)).fetchone()
    if row is None:
        raise InputError(f"no memory matches {text!r}")
    return row[0]
